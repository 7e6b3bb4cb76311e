// The native Claude runtime: Claude Code through the official TypeScript Agent SDK
// (@anthropic-ai/claude-agent-sdk), the CLI started by us inside the task's containment set. The
// SDK is imported lazily, on the first task, so a Bridge without Claude never loads it.
// Capabilities are those the offline end-to-end suite proves (test/runtimes/claude).
import { NATIVE_DESCRIPTORS, parseNativeVersion } from "../../config/runtime-catalog.ts";
import { NativeTurnAdapter } from "../kernel/turn-adapter.ts";
import type { TaskContext } from "../types.ts";
import { ClaudeTurn } from "./turn.ts";

export function parseClaudeVersion(line: string): string | null {
  return parseNativeVersion(NATIVE_DESCRIPTORS.claude, line);
}

export class ClaudeAdapter extends NativeTurnAdapter<ClaudeTurn> {
  protected override readonly descriptor = NATIVE_DESCRIPTORS.claude;

  async listModels(): Promise<Record<string, unknown>> {
    return { runtime: this.name, status: "unsupported", scope: "none", source: "claude_code", models: [], detail: "Claude Code has no model catalog to list; pass an explicit model id" };
  }

  protected override createTurn(ctx: TaskContext, exe: string): ClaudeTurn {
    return new ClaudeTurn(ctx, { ...this.opts, exe, settingSources: ["user"] });
  }
}
