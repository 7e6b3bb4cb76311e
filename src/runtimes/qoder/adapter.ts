// The native Qoder runtime: `qodercli` (@qoder-ai/qodercli) in its non-interactive streaming mode,
// one contained child per task. Qoder cannot run a turn without a Qoder account (native-findings
// §3), so what this adapter advertises is proved against a recorded-protocol fixture plus the
// real CLI's version and not-logged-in paths; `capability_state: "unmeasured"` says so to callers
// until a live acceptance run exists (docs/runtimes.md).
import { providerEnvironment } from "../../bridge/provider-env.ts";
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";
import { executableVersion, resolveExecutable } from "../codex/binary.ts";
import type { Diagnostics } from "../codex/turn.ts";
import type { AdapterResult, ReconcileResult, RuntimeAdapter, RuntimeInfo, TaskContext, TaskFacts } from "../types.ts";
import { QoderTurn } from "./turn.ts";

export interface QoderAdapterOptions {
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds" | "provider_env_file">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

export const QODER_CAPABILITIES = {
  persistent_session: true,
  live_steer: false,
  interactive_approval: true,
  interactive_question: true,
  in_flight_recovery: "session-resume",
  model_override: true,
  model_discovery: "unsupported",
  capability_state: "unmeasured",
} as const;

export function parseQoderVersion(line: string): string | null {
  const m = /^(?:qodercli\s+)?v?(\d+\.\d+\.\d+\S*)$/.exec(line);
  return m ? m[1]! : null;
}

export class QoderAdapter implements RuntimeAdapter {
  readonly name = "qoder";
  private readonly active = new Map<string, QoderTurn>();

  constructor(private readonly opts: QoderAdapterOptions) {}

  private exe(): string | null {
    return resolveExecutable(this.opts.config.bin);
  }

  async probe(): Promise<RuntimeInfo> {
    const exe = this.exe();
    const version = exe === null ? null : await executableVersion(exe, providerEnvironment(this.opts.agent.provider_env_file).env, parseQoderVersion);
    return { name: this.name, available: exe !== null && version !== null, version, ...QODER_CAPABILITIES };
  }

  async listModels(): Promise<Record<string, unknown>> {
    return {
      runtime: this.name,
      status: "unsupported",
      scope: "none",
      source: "qodercli",
      models: [],
      detail: "Qoder's model catalog needs a logged-in account and is not read by ServerFS; pass an explicit model id",
    };
  }

  run(ctx: TaskContext): Promise<AdapterResult> {
    return this.start(ctx);
  }

  continue(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.continueNativeSessionId === null) {
      return Promise.reject(new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "the source task has no Qoder session to continue"));
    }
    return this.start(ctx);
  }

  private async start(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.profile !== "workspace-write") {
      throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", "runtime qoder runs only with the workspace-write profile");
    }
    const exe = this.exe();
    if (exe === null) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "the qodercli executable was not found");
    const turn = new QoderTurn(ctx, { exe, config: this.opts.config, agent: this.opts.agent, tmpRoot: this.opts.tmpRoot, diagnostics: this.opts.diagnostics });
    this.active.set(ctx.taskId, turn);
    try {
      return await turn.run();
    } finally {
      if (this.active.get(ctx.taskId) === turn) this.active.delete(ctx.taskId);
    }
  }

  async sendMessage(taskId: string): Promise<void> {
    if (!this.active.has(taskId)) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "the task has no running Qoder turn");
    throw new ServerfsError("AGENT_PROVIDER_ERROR", "runtime qoder does not take messages while a task runs (live_steer=false); submit a continuation");
  }

  async cancel(taskId: string): Promise<void> {
    this.active.get(taskId)?.cancel();
  }

  async reconcile(task: TaskFacts): Promise<ReconcileResult> {
    return {
      status: task.nativeSessionId !== null ? "SESSION_RESUMABLE" : "UNKNOWN",
      providerActive: null,
      detail: "a qodercli child cannot be reattached after a restart",
    };
  }

  async close(): Promise<void> {
    for (const turn of this.active.values()) turn.cancel();
  }
}
