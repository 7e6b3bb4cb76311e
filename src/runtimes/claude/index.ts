// Entry point for the Bridge: the Claude runtime family (one adapter when `[agent.claude]` is enabled).
import type { Registry } from "../../config/types.ts";
import { nativeRuntimeFamily } from "../native/turn-adapter.ts";
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
  return nativeRuntimeFamily(registry, registry.agent.claude, diagnostics, (opts) => new ClaudeAdapter(opts));
}
