// The native Codex runtime: one Bridge-owned `codex app-server` child per task (never a shared
// daemon, so the child and everything it starts live in the task's containment set and can be
// proved stopped). Capabilities are exactly those the offline end-to-end suite proves
// (test/runtimes/codex): approvals, questions, live steering, session resume, model override
// and catalog discovery.
import { providerEnvironment } from "../../bridge/provider-env.ts";
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";
import type { AdapterResult, ReconcileResult, RuntimeAdapter, RuntimeInfo, TaskContext, TaskFacts } from "../types.ts";
import { executableVersion, resolveExecutable } from "./binary.ts";
import { discoverModels } from "./models.ts";
import { CodexTurn, type Diagnostics } from "./turn.ts";

export interface CodexAdapterOptions {
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds" | "provider_env_file">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

export const CODEX_CAPABILITIES = {
  persistent_session: true,
  live_steer: true,
  interactive_approval: true,
  interactive_question: true,
  in_flight_recovery: "session-resume",
  model_override: true,
  model_discovery: "runtime_catalog",
} as const;

export function parseCodexVersion(line: string): string | null {
  const m = /^codex(?:-cli)?\s+(\S+)/.exec(line);
  return m ? m[1]! : null;
}

export class CodexAdapter implements RuntimeAdapter {
  readonly name = "codex";
  private readonly active = new Map<string, CodexTurn>();

  constructor(private readonly opts: CodexAdapterOptions) {}

  private exe(): string | null {
    return resolveExecutable(this.opts.config.bin);
  }

  private env(): Record<string, string> {
    return providerEnvironment(this.opts.agent.provider_env_file).env;
  }

  async probe(): Promise<RuntimeInfo> {
    const exe = this.exe();
    const version = exe === null ? null : await executableVersion(exe, this.env(), parseCodexVersion);
    return { name: this.name, available: exe !== null && version !== null, version, ...CODEX_CAPABILITIES };
  }

  async listModels(): Promise<Record<string, unknown>> {
    const base = { runtime: this.name, source: "codex_app_server" };
    const exe = this.exe();
    if (exe === null) return { ...base, status: "unavailable", scope: "none", models: [], detail: "the codex executable was not found" };
    const models = await discoverModels({ exe, config: this.opts.config, agent: this.opts.agent, tmpRoot: this.opts.tmpRoot }, this.env());
    if (models.length === 0) throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex returned an empty model catalog");
    return { ...base, status: "ok", scope: "runtime_catalog", models };
  }

  run(ctx: TaskContext): Promise<AdapterResult> {
    return this.start(ctx);
  }

  continue(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.continueNativeSessionId === null) {
      return Promise.reject(new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "the source task has no codex thread to continue"));
    }
    return this.start(ctx);
  }

  private async start(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.profile !== "workspace-write") {
      throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", "runtime codex runs only with the workspace-write profile");
    }
    const exe = this.exe();
    if (exe === null) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "the codex executable was not found");
    const turn = new CodexTurn(ctx, { exe, config: this.opts.config, agent: this.opts.agent, tmpRoot: this.opts.tmpRoot, diagnostics: this.opts.diagnostics });
    // Registered before the first await so a racing cancel or steer finds it.
    this.active.set(ctx.taskId, turn);
    try {
      return await turn.run();
    } finally {
      if (this.active.get(ctx.taskId) === turn) this.active.delete(ctx.taskId);
    }
  }

  async sendMessage(taskId: string, message: string): Promise<void> {
    const turn = this.active.get(taskId);
    if (!turn) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "the task has no running codex turn");
    await turn.steer(message);
  }

  async cancel(taskId: string): Promise<void> {
    this.active.get(taskId)?.cancel();
  }

  /** A thread id proves the session can be resumed, never that the old app-server is gone. */
  async reconcile(task: TaskFacts): Promise<ReconcileResult> {
    return {
      status: task.nativeSessionId !== null ? "SESSION_RESUMABLE" : "UNKNOWN",
      providerActive: null,
      detail: "a Bridge-owned codex app-server cannot be reattached after a restart",
    };
  }

  async close(): Promise<void> {
    for (const turn of this.active.values()) turn.cancel();
  }
}
