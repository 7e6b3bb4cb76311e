// Every agent of the matrix, in the order a run takes them.
import { claudeAgentAcp, claudeCodeAcp, claudeNative } from "./claude.ts";
import { opencode } from "./opencode.ts";
import type { AgentSpec } from "./types.ts";

export const AGENTS: AgentSpec[] = [opencode, claudeAgentAcp, claudeCodeAcp, claudeNative];
