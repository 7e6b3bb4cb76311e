// The adapter skeleton of every runtime that runs one provider turn per task in a child the Bridge
// starts (ACP and the native Codex, Claude and Qoder runtimes). Only the turn talks to the
// provider; the adapter keeps the task's turn findable for cancel (and Codex's steer), and since
// such a child never outlives a Bridge restart, a recorded session id is the most reconcile can
// offer.
import { providerEnvironment } from "./provider-env.ts";
import { deploymentPaths } from "../../config/paths.ts";
import type { AgentConfig, NativeRuntimeConfig, Registry } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";
import { createLogger } from "../../log.ts";
import { executableVersion } from "./executable-version.ts";
import { resolveExecutable } from "../../config/executable.ts";
import type { Diagnostics } from "./turn-support.ts";
import { parseNativeVersion, type NativeRuntimeDescriptor, type NativeRuntimeName } from "../../config/runtime-catalog.ts";
import type { AdapterResult, ReconcileResult, RuntimeAdapter, RuntimeServices, TaskContext, TaskFacts } from "../types.ts";
import type { RuntimeInfo } from "../../config/runtime-info.ts";

/** One task's turn on its provider child. */
export interface TaskTurn {
  run(): Promise<AdapterResult>;
  /** Idempotent; the turn itself proves its child stopped. */
  cancel(): void;
}

export abstract class TurnAdapter<T extends TaskTurn> implements RuntimeAdapter {
  protected readonly active = new Map<string, T>();

  abstract readonly name: string;
  abstract probe(): Promise<RuntimeInfo>;
  /** What a continuation resumes, as in "the source task has no <sessionNoun> to continue". */
  protected abstract readonly sessionNoun: string;
  /** The reconcile detail: which child it is that cannot be reattached. */
  protected abstract readonly reattachDetail: string;
  /** Build the task's turn without starting anything; throwing refuses the task. */
  protected abstract newTurn(ctx: TaskContext): T;

  run(ctx: TaskContext): Promise<AdapterResult> {
    return this.start(ctx);
  }

  continue(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.continueNativeSessionId === null) {
      return Promise.reject(new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", `the source task has no ${this.sessionNoun} to continue`));
    }
    return this.start(ctx);
  }

  private async start(ctx: TaskContext): Promise<AdapterResult> {
    if (ctx.profile !== "workspace-write") {
      // ServerFS cannot enforce a read-only ACP agent, and holds the native runtimes to the same
      // rule, so only workspace-write runs (docs/acp-profiles.md, docs/runtimes.md).
      throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `runtime ${this.name} runs only with the workspace-write profile`);
    }
    const turn = this.newTurn(ctx);
    // Registered before the first await so a racing cancel or steer finds it.
    this.active.set(ctx.taskId, turn);
    try {
      return await turn.run();
    } finally {
      if (this.active.get(ctx.taskId) === turn) this.active.delete(ctx.taskId);
    }
  }

  async cancel(taskId: string): Promise<void> {
    this.active.get(taskId)?.cancel();
  }

  /** A persisted session id proves only that the session may be resumed, never that the old child is gone. */
  async reconcile(task: TaskFacts): Promise<ReconcileResult> {
    return {
      status: task.nativeSessionId !== null ? "SESSION_RESUMABLE" : "UNKNOWN",
      providerActive: null,
      detail: this.reattachDetail,
    };
  }

  async close(): Promise<void> {
    for (const turn of this.active.values()) turn.cancel();
  }
}

export interface NativeAdapterOptions {
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds" | "provider_env_file">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

/**
 * A native runtime: an operator-installed executable, looked up again for every probe and task so
 * an install or removal shows without a Bridge restart, and a capability table fixed by what its
 * end-to-end suite proves.
 */
export abstract class NativeTurnAdapter<T extends TaskTurn> extends TurnAdapter<T> {
  /** Its catalog entry: runtime name, executable and capability table. */
  protected abstract readonly descriptor: NativeRuntimeDescriptor;
  protected abstract createTurn(ctx: TaskContext, exe: string): T;

  constructor(protected readonly opts: NativeAdapterOptions) {
    super();
  }

  get name(): string {
    return this.descriptor.name;
  }

  protected get sessionNoun(): string {
    return this.descriptor.sessionNoun;
  }

  protected get reattachDetail(): string {
    return this.descriptor.reattachDetail;
  }

  protected exe(): string | null {
    return resolveExecutable(this.opts.config.bin);
  }

  protected env(): Record<string, string> {
    return providerEnvironment(this.opts.agent.provider_env_file).env;
  }

  override async probe(): Promise<RuntimeInfo> {
    const exe = this.exe();
    const version = exe === null ? null : await executableVersion(exe, this.env(), (line) => parseNativeVersion(this.descriptor, line));
    return { name: this.name, available: exe !== null && version !== null, version, ...this.descriptor.capabilities };
  }

  protected override newTurn(ctx: TaskContext): T {
    const exe = this.exe();
    if (exe === null) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `the ${this.descriptor.executable} executable was not found`);
    return this.createTurn(ctx, exe);
  }

  protected activeTurn(taskId: string): T {
    const turn = this.active.get(taskId);
    if (!turn) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", `the task has no running ${this.descriptor.turnNoun}`);
    return turn;
  }

  /** For runtimes with live_steer=false; Codex steers instead. */
  async sendMessage(taskId: string, _message: string): Promise<void> {
    this.activeTurn(taskId);
    throw new ServerfsError("AGENT_PROVIDER_ERROR", `runtime ${this.name} does not take messages while a task runs (live_steer=false); submit a continuation`);
  }
}

/** A native runtime family (the RuntimeFamily shape): its one adapter when `[agent.<name>]` is enabled. */
export function nativeRuntimeFamily(name: NativeRuntimeName, build: (opts: NativeAdapterOptions) => RuntimeAdapter) {
  return (registry: Registry, _services: (runtime: string) => RuntimeServices, _options: unknown = {}, diagnostics?: Diagnostics): RuntimeAdapter[] => {
    const config = registry.agent[name];
    if (!config.enabled) return [];
    return [build({ config, agent: registry.agent, tmpRoot: deploymentPaths(registry).tmpDir, diagnostics: diagnostics ?? loggerDiagnostics(registry) })];
  };
}

export function loggerDiagnostics(registry: Registry): Diagnostics {
  const logger = createLogger({ level: registry.server.log_level });
  return { record: (kind, fields) => logger.warn(`native.${kind}`, fields) };
}
