// Entry point for the Bridge: the Claude runtime family (one adapter when `[agent.claude]` is enabled).
import { nativeRuntimeFamily } from "../kernel/turn-adapter.ts";
import { ClaudeAdapter } from "./adapter.ts";

export { ClaudeAdapter } from "./adapter.ts";

export const claudeRuntimeFamily = nativeRuntimeFamily("claude", (opts) => new ClaudeAdapter(opts));
