// Every agent of the matrix, in the order a run takes them.
import { opencode } from "./opencode.ts";
import type { AgentSpec } from "./types.ts";

export const AGENTS: AgentSpec[] = [opencode];
