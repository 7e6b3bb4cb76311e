// Entry point for the Bridge: one AcpAdapter per configured ACP profile, keyed by runtime id.
import { deploymentPaths } from "../../config/paths.ts";
import type { Registry } from "../../config/types.ts";
import type { Logger } from "../../log.ts";
import type { AdapterFactory } from "../types.ts";
import { AcpAdapter } from "./adapter.ts";
import type { Diagnostics } from "./turn.ts";

export { AcpAdapter } from "./adapter.ts";

/** Private diagnostics go to the Bridge log as one JSON line each, already bounded and redacted. */
export function loggerDiagnostics(logger: Logger): Diagnostics {
  return { record: (kind, fields) => logger.warn(`acp.${kind}`, fields) };
}

export function acpAdapterFactories(registry: Registry, diagnostics: Diagnostics): Map<string, AdapterFactory> {
  const tmpRoot = deploymentPaths(registry).tmpDir;
  const out = new Map<string, AdapterFactory>();
  for (const profile of registry.agent.acp_profiles) {
    out.set(profile.runtime, (services) => new AcpAdapter({ profile, agent: registry.agent, tmpRoot, services, diagnostics }));
  }
  return out;
}
