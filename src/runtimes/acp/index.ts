// Entry point for the Bridge: the ACP runtime family, one AcpAdapter per configured ACP profile.
// It has the RuntimeFamily shape of src/bridge/adapters.ts, so registering it there is one line.
import { providerEnvironment } from "../kernel/provider-env.ts";
import { deploymentPaths } from "../../config/paths.ts";
import type { Registry } from "../../config/types.ts";
import { createLogger, type Logger } from "../../log.ts";
import type { Diagnostics } from "../kernel/turn-support.ts";
import type { RuntimeAdapter, RuntimeServices } from "../types.ts";
import { AcpAdapter } from "./adapter.ts";

export { AcpAdapter } from "./adapter.ts";

/** Private diagnostics go to the Bridge log as one JSON line each, already bounded and redacted. */
export function loggerDiagnostics(logger: Logger): Diagnostics {
  return { record: (kind, fields) => logger.warn(`acp.${kind}`, fields) };
}

export function acpRuntimeFamily(
  registry: Registry,
  services: (runtime: string) => RuntimeServices,
  _options: unknown = {},
  diagnostics: Diagnostics = loggerDiagnostics(createLogger({ level: registry.server.log_level })),
): RuntimeAdapter[] {
  const tmpRoot = deploymentPaths(registry).tmpDir;
  if (registry.agent.acp_profiles.length === 0) return [];
  // The same credentials the service redacts from caller-visible text are kept out of the
  // private diagnostics too (agents echo their configuration into stderr).
  const { secrets } = providerEnvironment(registry.agent.provider_env_file);
  return registry.agent.acp_profiles.map(
    (profile) => new AcpAdapter({ profile, agent: registry.agent, tmpRoot, services: services(profile.runtime), diagnostics, secrets }),
  );
}
