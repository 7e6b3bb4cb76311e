// The native Claude runtime: Claude Code through the official TypeScript Agent SDK
// (@anthropic-ai/claude-agent-sdk), the CLI started by us inside the task's containment set. The
// SDK is imported lazily, on the first task, so a Bridge without Claude never loads it.
// Capabilities are those the offline end-to-end suite proves (test/runtimes/claude).
import { providerEnvironment } from "../../bridge/provider-env.ts";
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";
import { executableVersion, resolveExecutable } from "../codex/binary.ts";
import type { Diagnostics } from "../codex/turn.ts";
import type { AdapterResult, ReconcileResult, RuntimeAdapter, RuntimeInfo, TaskContext, TaskFacts } from "../types.ts";
import { ClaudeTurn } from "./turn.ts";

export interface ClaudeAdapterOptions {
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds" | "provider_env_file">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

export const CLAUDE_CAPABILITIES = {
  persistent_session: true,
  live_steer: false,
  interactive_approval: true,
  interactive_question: true,
  in_flight_recovery: "session-resume",
  model_override: true,
  model_discovery: "unsupported",
} as const;

/** `2.1.332 (Claude Code)` → `2.1.332`. */
export function parseClaudeVersion(line: string): string | null {
  const m = /^(\d+\.\d+\.\d+\S*)\s*(\(Claude Code\))?$/.exec(line);
  return m ? m[1]! : null;
}

export class ClaudeAdapter implements RuntimeAdapter {
  readonly name = "claude";
  private readonly active = new Map<string, ClaudeTurn>();

  constructor(private readonly opts: ClaudeAdapterOptions) {}

  private exe(): string | null {
    return resolveExecutable(this.opts.config.bin);
  }

  async probe(): Promise<RuntimeInfo> {
    const exe = this.exe();
    const version = exe === null ? null : await executableVersion(exe, providerEnvironment(this.opts.agent.provider_env_file).env, parseClaudeVersion);
    return { name: this.name, available: exe !== null && version !== null, version, ...CLAUDE_CAPABILITIES };
  }

  async listModels(): Promise<Record<string, unknown>> {
    return { runtime: this.name, status: "unsupported", scope: "none", source: "claude_code", models: [], detail: "Claude Code has no model catalog to list; pass an explicit model id" };
  }

  run(ctx: TaskContext): Promise<AdapterResult> {
    return this.start(ctx);
  }

  continue(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.continueNativeSessionId === null) {
      return Promise.reject(new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "the source task has no Claude session to continue"));
    }
    return this.start(ctx);
  }

  private async start(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.profile !== "workspace-write") {
      throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", "runtime claude runs only with the workspace-write profile");
    }
    const exe = this.exe();
    if (exe === null) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "the claude executable was not found");
    const turn = new ClaudeTurn(ctx, {
      exe,
      config: this.opts.config,
      agent: this.opts.agent,
      tmpRoot: this.opts.tmpRoot,
      diagnostics: this.opts.diagnostics,
      settingSources: ["user"],
    });
    this.active.set(ctx.taskId, turn);
    try {
      return await turn.run();
    } finally {
      if (this.active.get(ctx.taskId) === turn) this.active.delete(ctx.taskId);
    }
  }

  async sendMessage(taskId: string): Promise<void> {
    if (!this.active.has(taskId)) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "the task has no running Claude turn");
    throw new ServerfsError("AGENT_PROVIDER_ERROR", "runtime claude does not take messages while a task runs (live_steer=false); submit a continuation");
  }

  async cancel(taskId: string): Promise<void> {
    this.active.get(taskId)?.cancel();
  }

  async reconcile(task: TaskFacts): Promise<ReconcileResult> {
    return {
      status: task.nativeSessionId !== null ? "SESSION_RESUMABLE" : "UNKNOWN",
      providerActive: null,
      detail: "a Claude Code child cannot be reattached after a restart",
    };
  }

  async close(): Promise<void> {
    for (const turn of this.active.values()) turn.cancel();
  }
}
