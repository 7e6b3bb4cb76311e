// Entry point for the Bridge: the Qoder runtime family (one adapter when `[agent.qoder]` is enabled).
import { deploymentPaths } from "../../config/paths.ts";
import type { Registry } from "../../config/types.ts";
import { loggerDiagnostics } from "../codex/index.ts";
import type { Diagnostics } from "../native/turn-support.ts";
import type { RuntimeAdapter, RuntimeServices } from "../types.ts";
import { QoderAdapter } from "./adapter.ts";

export { QoderAdapter } from "./adapter.ts";

export function qoderRuntimeFamily(
  registry: Registry,
  _services: (runtime: string) => RuntimeServices,
  _options: unknown = {},
  diagnostics?: Diagnostics,
): RuntimeAdapter[] {
  if (!registry.agent.qoder.enabled) return [];
  return [
    new QoderAdapter({
      config: registry.agent.qoder,
      agent: registry.agent,
      tmpRoot: deploymentPaths(registry).tmpDir,
      diagnostics: diagnostics ?? loggerDiagnostics(registry),
    }),
  ];
}
