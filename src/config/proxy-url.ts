// The agent proxy endpoint: credentialless `http://host:port` only (a provider's tool processes
// can read their environment, so a password there would be handed to every tool). The URL is
// normalized to `http://<lowercased host>:<port>` so TOML and .env spell it the same way.
// Reasons never repeat the URL: it may carry a password.

const SHAPE = /^http:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::(\d{1,5}))?\/?$/;

export function normalizeProxyUrl(text: string): { url: string } | { reason: string } {
  if (text.includes("@")) return { reason: "must not carry credentials (user:password@); the agent proxy must be credentialless" };
  if (!/^http:\/\//i.test(text)) return { reason: "must be an http:// URL (https, socks and other schemes are not supported)" };
  const m = SHAPE.exec(`http://${text.slice("http://".length)}`);
  if (!m) return { reason: "must be http://host:port with no path, query or fragment" };
  const port = m[2];
  if (port === undefined) return { reason: "must name the port explicitly (http://host:port)" };
  const n = Number(port);
  if (!Number.isInteger(n) || n < 1 || n > 65535) return { reason: "the port must be 1 to 65535" };
  return { url: `http://${m[1]!.toLowerCase()}:${n}` };
}

/** One NO_PROXY entry: a host, domain suffix, IP or CIDR; no whitespace, commas or credentials. */
export function noProxyEntryProblem(entry: string): string | null {
  if (entry === "") return "entries must not be empty";
  if (/[\s,@/]/.test(entry) && !/^[0-9A-Fa-f:.]+\/\d{1,3}$/.test(entry)) {
    return "entries must be a host, domain, IP address or CIDR without spaces or commas";
  }
  return null;
}
