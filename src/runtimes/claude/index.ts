// Entry point for the Bridge: the Claude runtime family (one adapter when `[agent.claude]` is enabled).
import { deploymentPaths } from "../../config/paths.ts";
import type { Registry } from "../../config/types.ts";
import { loggerDiagnostics } from "../codex/index.ts";
import type { Diagnostics } from "../native/turn-support.ts";
import type { RuntimeAdapter, RuntimeServices } from "../types.ts";
import { ClaudeAdapter } from "./adapter.ts";

export { ClaudeAdapter } from "./adapter.ts";

export function claudeRuntimeFamily(
  registry: Registry,
  _services: (runtime: string) => RuntimeServices,
  _options: unknown = {},
  diagnostics?: Diagnostics,
): RuntimeAdapter[] {
  if (!registry.agent.claude.enabled) return [];
  return [
    new ClaudeAdapter({
      config: registry.agent.claude,
      agent: registry.agent,
      tmpRoot: deploymentPaths(registry).tmpDir,
      diagnostics: diagnostics ?? loggerDiagnostics(registry),
    }),
  ];
}
