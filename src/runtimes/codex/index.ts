// Entry point for the Bridge: the Codex runtime family (one adapter when `[agent.codex]` is enabled).
import { deploymentPaths } from "../../config/paths.ts";
import type { Registry } from "../../config/types.ts";
import { createLogger } from "../../log.ts";
import type { RuntimeAdapter, RuntimeServices } from "../types.ts";
import { CodexAdapter } from "./adapter.ts";
import type { Diagnostics } from "../native/turn-support.ts";

export { CodexAdapter } from "./adapter.ts";

export function codexRuntimeFamily(
  registry: Registry,
  _services: (runtime: string) => RuntimeServices,
  _options: unknown = {},
  diagnostics?: Diagnostics,
): RuntimeAdapter[] {
  if (!registry.agent.codex.enabled) return [];
  const logger = diagnostics ?? loggerDiagnostics(registry);
  return [new CodexAdapter({ config: registry.agent.codex, agent: registry.agent, tmpRoot: deploymentPaths(registry).tmpDir, diagnostics: logger })];
}

export function loggerDiagnostics(registry: Registry): Diagnostics {
  const logger = createLogger({ level: registry.server.log_level });
  return { record: (kind, fields) => logger.warn(`native.${kind}`, fields) };
}
