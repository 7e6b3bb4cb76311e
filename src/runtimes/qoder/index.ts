// Entry point for the Bridge: the Qoder runtime family (one adapter when `[agent.qoder]` is enabled).
import type { Registry } from "../../config/types.ts";
import { nativeRuntimeFamily } from "../native/turn-adapter.ts";
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
  return nativeRuntimeFamily(registry, registry.agent.qoder, diagnostics, (opts) => new QoderAdapter(opts));
}
