// What to do when no Bridge answers: the next step every AGENT_BRIDGE_UNAVAILABLE ends with. MCP
// answers get the placeholder FILE (a caller never learns a host path); the command line, which
// knows the operator's own --config, names it.

export function bridgeStartHint(configFile: string | null = null): string {
  return `start the Bridge: serverfs bridge --config ${configFile ?? "FILE"}, or serverfs service start when its service is installed`;
}
