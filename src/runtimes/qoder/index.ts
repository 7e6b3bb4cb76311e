// Entry point for the Bridge: the Qoder runtime family (one adapter when `[agent.qoder]` is enabled).
import { nativeRuntimeFamily } from "../kernel/turn-adapter.ts";
import { QoderAdapter } from "./adapter.ts";

export { QoderAdapter } from "./adapter.ts";

export const qoderRuntimeFamily = nativeRuntimeFamily("qoder", (opts) => new QoderAdapter(opts));
