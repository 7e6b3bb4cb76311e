// Entry point for the Bridge: the Codex runtime family (one adapter when `[agent.codex]` is enabled).
import { nativeRuntimeFamily } from "../kernel/turn-adapter.ts";
import { CodexAdapter } from "./adapter.ts";

export { CodexAdapter } from "./adapter.ts";

export const codexRuntimeFamily = nativeRuntimeFamily("codex", (opts) => new CodexAdapter(opts));
