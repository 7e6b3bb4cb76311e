// Every agent of the matrix, in the order a run takes them.
import { auggie } from "./auggie.ts";
import { claudeAgentAcp, claudeCodeAcp, claudeNative } from "./claude.ts";
import { codexAcp, codexNative } from "./codex.ts";
import { copilot } from "./copilot.ts";
import { gemini } from "./gemini.ts";
import { opencode } from "./opencode.ts";
import { qwen } from "./qwen.ts";
import type { AgentSpec } from "./types.ts";

export const AGENTS: AgentSpec[] = [opencode, claudeAgentAcp, claudeCodeAcp, codexAcp, qwen, copilot, gemini, auggie, claudeNative, codexNative];
