// Entry point for the Bridge: the Codex runtime family (one adapter when `[agent.codex]` is enabled).
import type { Registry } from "../../config/types.ts";
import { nativeRuntimeFamily } from "../native/turn-adapter.ts";
import type { Diagnostics } from "../native/turn-support.ts";
import type { RuntimeAdapter, RuntimeServices } from "../types.ts";
import { CodexAdapter } from "./adapter.ts";

export { CodexAdapter } from "./adapter.ts";

export function codexRuntimeFamily(
  registry: Registry,
  _services: (runtime: string) => RuntimeServices,
  _options: unknown = {},
  diagnostics?: Diagnostics,
): RuntimeAdapter[] {
  return nativeRuntimeFamily(registry, registry.agent.codex, diagnostics, (opts) => new CodexAdapter(opts));
}
