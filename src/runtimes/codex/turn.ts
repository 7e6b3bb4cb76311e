// One ServerFS task (or continuation) on a Bridge-owned `codex app-server` child: spawn it in the
// task's containment set, initialize, start or resume the thread, start one turn with the
// approval policy pinned to "on-request" and approvals routed to the user, broker every server
// request to a human, and end with the child's input closed and its set stopped with proof.
// Cancel is terminal-first: the service has already persisted it when ctx.signal aborts; here a
// pending human wait answers Codex "cancel", `turn/interrupt` is sent, and because unified-exec
// keeps a running command alive after an interrupt (docs/runtimes.md, Codex) the whole containment
// set is stopped rather than trusting the interrupt.
import type { ContainedProcess } from "../../../platform/types.ts";
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { childEnvExtras } from "../acp/child-env.ts";
import { closeChildInput } from "../acp/transport.ts";
import {
  HumanWaits,
  IdleWatchdog,
  TaskDiagnostics,
  abortable,
  cancelledError,
  runTurnFrame,
  stopWithProof,
  untilWithdrawn,
  type Diagnostics,
} from "../native/turn-support.ts";
import type { AdapterResult, ProviderEventType, TaskContext } from "../types.ts";
import {
  COMMAND_APPROVAL,
  FILE_CHANGE_APPROVAL,
  PERMISSIONS_APPROVAL,
  USER_INPUT,
  commandApproval,
  decisionResponse,
  fileChangeApproval,
  permissionsApproval,
  permissionsResponse,
  userInputQuestion,
  userInputResponse,
} from "./interactions.ts";
import { CodexRpc, CodexRpcError } from "./rpc.ts";

export const CLIENT_INFO = { name: "serverfs", title: "serverfs", version: "1" };
/** Pinned on every thread and turn so a user's `never`/auto-review config cannot skip a human. */
export const APPROVAL_POLICY = "on-request";
export const APPROVALS_REVIEWER = "user";

const HANDSHAKE_TIMEOUT_MS = 60_000;
const REQUEST_TIMEOUT_MS = 60_000;
const INTERRUPT_GRACE_MS = 3_000;
const STDERR_TAIL_BYTES = 64 * 1024;
const MAX_ID_CHARS = 512;

export interface CodexTurnOptions {
  exe: string;
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

/** Argv and extra environment of a Bridge-owned app-server (shared with model discovery). */
export function appServerLaunch(opts: Pick<CodexTurnOptions, "exe" | "config" | "agent">, tmpDir: string): { argv: string[]; env: Record<string, string> } {
  const env = childEnvExtras({ proxy: opts.agent.proxy, useProxy: opts.config.use_proxy, tmpDir });
  // Codex writes ANSI tracing to stderr; only warnings are worth a bounded tail.
  env.RUST_LOG = "warn";
  env.NO_COLOR = "1";
  return { argv: [opts.exe, "app-server"], env };
}

interface TurnOutcome {
  status: string;
  errorMessage: string | null;
}

export class CodexTurn {
  private readonly stopping = new AbortController();
  private proc: ContainedProcess | null = null;
  private rpc: CodexRpc | null = null;
  private threadId: string | null = null;
  private turnId: string | null = null;
  private cancelRequested = false;
  private interrupted = false;
  private readonly turnIdWaiters: Array<(id: string | null) => void> = [];
  private turnDone!: (o: TurnOutcome) => void;
  private readonly turnCompleted: Promise<TurnOutcome>;
  /** Codex request ids still waiting on a human. */
  private readonly humanWaits = new HumanWaits();
  private readonly fileChanges = new Map<string, string[]>();
  private lastAgentText: string | null = null;
  private finalAnswer: string | null = null;
  private readonly idle: IdleWatchdog;
  private readonly diagnostics: TaskDiagnostics;

  constructor(
    private readonly ctx: TaskContext,
    private readonly opts: CodexTurnOptions,
  ) {
    this.diagnostics = new TaskDiagnostics(opts.diagnostics, "codex", ctx);
    this.idle = new IdleWatchdog(opts.agent.event_idle_timeout_seconds, (seconds) => {
      this.rpc?.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `codex sent nothing for ${seconds} s`));
    });
    this.turnCompleted = new Promise((r) => (this.turnDone = r));
  }

  /** Idempotent: withdraws pending human waits, interrupts the turn, and stops waiting. */
  cancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    this.humanWaits.abortAll();
    this.stopping.abort(cancelledError());
    void this.interrupt();
  }

  /** Live steering: waits (bounded) for the turn id, then `turn/steer` with that id as precondition. */
  async steer(message: string): Promise<void> {
    const turnId = this.turnId ?? (await this.waitTurnId(10_000));
    if (turnId === null || this.rpc === null || this.threadId === null || this.stopping.signal.aborted) {
      throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "the codex turn is not running");
    }
    try {
      await this.rpc.request("turn/steer", { threadId: this.threadId, input: [textInput(message)], expectedTurnId: turnId }, REQUEST_TIMEOUT_MS);
    } catch (err) {
      this.diag("steer_refused", err);
      throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex refused the message for the running turn");
    }
  }

  run(): Promise<AdapterResult> {
    return runTurnFrame(this.ctx, this, this.opts.tmpRoot, `codex-${this.ctx.runId}`, (tmpDir) => this.drive(tmpDir));
  }

  /** After the run, whatever its end: no idle timer, and no steer left waiting for a turn id. */
  cleanup(): void {
    this.idle.clear();
    for (const w of this.turnIdWaiters.splice(0)) w(null);
  }

  private async drive(tmpDir: string): Promise<AdapterResult> {
    const launch = appServerLaunch(this.opts, tmpDir);
    try {
      this.proc = await this.ctx.spawn({ argv: launch.argv, env: launch.env, stderrLimitBytes: STDERR_TAIL_BYTES });
    } catch (err) {
      if (this.cancelRequested) throw cancelledError();
      this.diag("launch_failed", err);
      throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "codex app-server could not be started");
    }
    this.rpc = new CodexRpc(this.proc, {
      onNotification: (m, p) => this.onNotification(m, p),
      onServerRequest: (m, p, id) => this.onServerRequest(m, p, id),
      onActivity: () => this.touchIdle(),
    });
    try {
      const result = await this.converse();
      await this.teardown();
      return result;
    } catch (err) {
      const failure = this.cancelRequested ? cancelledError() : toServerfsError(err, "AGENT_PROVIDER_ERROR", "codex failed");
      if (!this.cancelRequested && !(err instanceof ServerfsError)) this.diag("unexpected_error", err);
      this.stopping.abort(failure);
      await this.teardown();
      throw failure;
    }
  }

  private async converse(): Promise<AdapterResult> {
    const rpc = this.rpc!;
    await this.abortable(
      rpc.request("initialize", { clientInfo: CLIENT_INFO, capabilities: { experimentalApi: true } }, HANDSHAKE_TIMEOUT_MS).catch((err) => {
        throw this.providerError("initialize", err);
      }),
    );
    rpc.notify("initialized");
    const model = this.ctx.requestedModel;
    const common = {
      cwd: this.ctx.cwd,
      approvalPolicy: APPROVAL_POLICY,
      approvalsReviewer: APPROVALS_REVIEWER,
      ...(model !== null ? { model } : {}),
    };
    const resumeId = this.ctx.continueNativeSessionId;
    const started = await this.abortable(
      (resumeId === null
        ? rpc.request("thread/start", { ...common, serviceName: "serverfs" }, REQUEST_TIMEOUT_MS)
        : rpc.request("thread/resume", { ...common, threadId: resumeId, excludeTurns: true }, REQUEST_TIMEOUT_MS)
      ).catch((err) => {
        if (resumeId !== null && err instanceof CodexRpcError) {
          this.diag("resume_refused", err);
          throw new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "codex could not resume the thread of the prior task");
        }
        throw this.providerError(resumeId === null ? "thread/start" : "thread/resume", err);
      }),
    );
    const threadId = idOf((started as { thread?: { id?: unknown } }).thread?.id);
    if (threadId === null) throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex returned no usable thread id");
    if (resumeId !== null && threadId !== resumeId) throw new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "codex resumed a different thread");
    this.threadId = threadId;
    this.ctx.recordNativeIds(threadId, null);

    this.touchIdle();
    const turn = await this.abortable(
      rpc.request("turn/start", { threadId, input: [textInput(this.ctx.prompt)], ...common }, REQUEST_TIMEOUT_MS).catch((err) => {
        throw this.providerError("turn/start", err);
      }),
    );
    const turnId = idOf((turn as { turn?: { id?: unknown } }).turn?.id);
    if (turnId === null) throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex returned no usable turn id");
    this.adoptTurn(turnId);
    const outcome = await this.abortable(this.turnCompleted);
    this.idle.clear();
    if (outcome.status === "completed") {
      const text = this.finalAnswer ?? this.lastAgentText ?? "";
      return { finalResponse: text, nativeSessionId: threadId, nativeTurnId: turnId };
    }
    if (outcome.status === "interrupted" && this.cancelRequested) throw cancelledError();
    if (outcome.errorMessage !== null) this.diag("turn_failed", outcome.errorMessage);
    throw new ServerfsError("AGENT_PROVIDER_ERROR", `the codex turn ended ${outcome.status.slice(0, 32)}`, { turn_status: outcome.status.slice(0, 32) });
  }

  private adoptTurn(turnId: string): void {
    if (this.turnId !== null) return;
    this.turnId = turnId;
    this.ctx.recordNativeIds(this.threadId, turnId);
    this.ctx.emitEvent("turn.started", {});
    for (const w of this.turnIdWaiters.splice(0)) w(turnId);
    if (this.cancelRequested) void this.interrupt();
  }

  private waitTurnId(ms: number): Promise<string | null> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(null), ms);
      this.turnIdWaiters.push((id) => {
        clearTimeout(t);
        resolve(id);
      });
    });
  }

  private async interrupt(): Promise<void> {
    if (this.interrupted || this.rpc === null || this.rpc.closed || this.threadId === null || this.turnId === null) return;
    this.interrupted = true;
    try {
      await this.rpc.request("turn/interrupt", { threadId: this.threadId, turnId: this.turnId }, INTERRUPT_GRACE_MS);
    } catch (err) {
      this.diag("interrupt_failed", err);
    }
  }

  private onNotification(method: string, params: Record<string, unknown>): void {
    if (typeof params.threadId === "string" && this.threadId !== null && params.threadId !== this.threadId) return;
    if (method === "turn/started") {
      const id = idOf((params.turn as { id?: unknown } | undefined)?.id);
      if (id !== null && this.turnId === null) this.adoptTurn(id);
      return;
    }
    if (typeof params.turnId === "string" && this.turnId !== null && params.turnId !== this.turnId) return;
    switch (method) {
      case "item/started":
      case "item/completed":
        this.onItem(method === "item/started" ? "item.started" : "item.completed", params.item);
        return;
      case "error": {
        const e = (params.error ?? {}) as { message?: unknown };
        const message = typeof e.message === "string" ? e.message.slice(0, 2048) : "codex reported an error";
        this.emit("provider.error", { message, will_retry: params.willRetry === true });
        return;
      }
      case "serverRequest/resolved": {
        // Codex cleared a request itself: the pending interaction is stale, not a synthetic answer.
        const id = params.requestId;
        if (id !== undefined) this.humanWaits.withdraw(String(id), this.ctx);
        return;
      }
      case "turn/completed": {
        const turn = (params.turn ?? {}) as { id?: unknown; status?: unknown; error?: { message?: unknown } | null };
        if (this.turnId !== null && turn.id !== this.turnId) return;
        this.turnDone({
          status: typeof turn.status === "string" ? turn.status : "failed",
          errorMessage: turn.error && typeof turn.error.message === "string" ? turn.error.message : null,
        });
        return;
      }
      default:
        return;
    }
  }

  private onItem(type: "item.started" | "item.completed", raw: unknown): void {
    if (raw === null || typeof raw !== "object") return;
    const item = raw as Record<string, unknown>;
    const kind = typeof item.type === "string" ? item.type : "unknown";
    if (kind === "userMessage") return;
    if (kind === "agentMessage") {
      if (type !== "item.completed" || typeof item.text !== "string") return;
      this.lastAgentText = item.text;
      if (item.phase === "final_answer") this.finalAnswer = item.text;
      this.emit("agent.message", { text: item.text, ...(typeof item.phase === "string" ? { phase: item.phase } : {}) });
      return;
    }
    const payload: Record<string, unknown> = { type: kind };
    if (typeof item.id === "string") payload.item_id = item.id;
    if (kind === "commandExecution") {
      if (typeof item.command === "string") payload.command = item.command.slice(0, 4096);
      if (typeof item.status === "string") payload.status = item.status;
      if (typeof item.exitCode === "number") payload.exit_code = item.exitCode;
    } else if (kind === "fileChange") {
      const changes = Array.isArray(item.changes) ? (item.changes as Array<{ path?: unknown }>) : [];
      const paths = changes.map((c) => (typeof c.path === "string" ? c.path : "")).filter((p) => p.length > 0);
      if (typeof item.id === "string") this.fileChanges.set(item.id, paths);
      payload.changes = paths.slice(0, 64).map((p) => ({ path: p }));
      if (typeof item.status === "string") payload.status = item.status;
    } else if (typeof item.status === "string") {
      payload.status = item.status;
    }
    this.emit(type, payload);
  }

  private onServerRequest(method: string, params: Record<string, unknown>, id: number | string): Promise<unknown> {
    if (typeof params.threadId === "string" && params.threadId !== this.threadId) {
      return Promise.reject(new ServerfsError("PERMISSION_OUTSIDE_POLICY", "request for another thread"));
    }
    return this.humanWaits.enqueue(String(id), (withdrawn) => this.broker(method, params, withdrawn));
  }

  /** Ask the human; on cancel or withdrawal answer Codex "cancel"/empty, never a made-up approval. */
  private async broker(method: string, params: Record<string, unknown>, withdrawn: AbortSignal): Promise<unknown> {
    const refusal = method === USER_INPUT ? null : method === PERMISSIONS_APPROVAL ? { permissions: {}, scope: "turn" } : { decision: "cancel" };
    if (this.stopping.signal.aborted || withdrawn.aborted) {
      if (refusal === null) throw new ServerfsError("AGENT_TASK_TERMINAL", "the task has ended");
      return refusal;
    }
    this.idle.clear();
    try {
      switch (method) {
        case COMMAND_APPROVAL:
          return decisionResponse(await untilWithdrawn(this.ctx.requestApproval(commandApproval(params, this.ctx.relativeCwd)), withdrawn));
        case FILE_CHANGE_APPROVAL: {
          const paths = typeof params.itemId === "string" ? (this.fileChanges.get(params.itemId) ?? []) : [];
          return decisionResponse(await untilWithdrawn(this.ctx.requestApproval(fileChangeApproval(params, paths)), withdrawn));
        }
        case PERMISSIONS_APPROVAL:
          return permissionsResponse(params, await untilWithdrawn(this.ctx.requestApproval(permissionsApproval(params)), withdrawn));
        case USER_INPUT: {
          const question = userInputQuestion(params);
          return userInputResponse(params, await untilWithdrawn(this.ctx.askQuestion(question), withdrawn));
        }
        default:
          // MCP elicitations, dynamic tool calls, auth refresh, legacy approvals: not brokered.
          this.emit("provider.request_refused", { method: method.slice(0, 64) });
          throw new ServerfsError("PERMISSION_OUTSIDE_POLICY", "ServerFS does not answer this request");
      }
    } catch (err) {
      const e = toServerfsError(err, "AGENT_PROVIDER_ERROR");
      if (e.code === "PERMISSION_OUTSIDE_POLICY" || refusal === null) {
        // An unanswerable question: Codex gets an error answer; if it is not a cancel the task goes on.
        if (!this.stopping.signal.aborted && !withdrawn.aborted && e.code !== "PERMISSION_OUTSIDE_POLICY") this.rpc?.fail(e);
        throw e;
      }
      // Expiry or a stale request ends the turn with the interaction's error (unless cancelled).
      if (!this.stopping.signal.aborted && !withdrawn.aborted) this.rpc?.fail(e);
      return refusal;
    } finally {
      this.touchIdle();
    }
  }

  private emit(type: ProviderEventType, payload: Record<string, unknown>): void {
    try {
      this.ctx.emitEvent(type, payload);
    } catch (err) {
      this.rpc?.fail(toServerfsError(err, "AGENT_EVENT_TOO_LARGE"));
    }
  }

  private touchIdle(): void {
    if (this.turnId === null || this.humanWaits.size > 0 || this.stopping.signal.aborted) return;
    this.idle.restart();
  }

  private abortable<T>(p: Promise<T>): Promise<T> {
    return abortable(p, this.stopping.signal, this.rpc ? this.rpc.failure : null);
  }

  private providerError(step: string, err: unknown): ServerfsError {
    if (err instanceof ServerfsError) return err;
    this.diag(`${step.replace(/\W/g, "_")}_failed`, err);
    return new ServerfsError("AGENT_PROVIDER_ERROR", `codex refused ${step}`);
  }

  /** Close the app-server's input (it exits on EOF), give it a moment, then stop the set with proof. */
  private async teardown(): Promise<void> {
    this.idle.clear();
    const proc = this.proc;
    if (proc === null) return;
    if (this.cancelRequested) await this.interrupt();
    this.rpc?.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "the task ended"));
    closeChildInput(proc);
    if (!this.cancelRequested) await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 2000))]);
    await stopWithProof(proc, "codex", (kind, detail) => this.diag(kind, detail));
  }

  /** Codex's stderr is ANSI-coloured tracing: the colour codes go before the common blanking. */
  private diag(kind: string, detail: unknown): void {
    const text = detail instanceof CodexRpcError ? detail.providerMessage : detail instanceof ServerfsError ? detail.code : typeof detail === "string" ? detail : "error";
    this.diagnostics.record(kind, text.replace(/\u001b\[[0-9;]*m/g, ""));
  }
}

function textInput(text: string): Record<string, unknown> {
  return { type: "text", text, text_elements: [] };
}

function idOf(v: unknown): string | null {
  return typeof v === "string" && v.length > 0 && v.length <= MAX_ID_CHARS ? v : null;
}
