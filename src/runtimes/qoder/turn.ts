// One ServerFS task (or continuation) on `qodercli` in its non-interactive streaming mode: spawn it
// in the task's containment set with permission mode "default" and permission prompts routed to
// us over stdio (so neither a user's bypass mode nor its own auto mode can skip the human), apply
// the Agent proxy with `set_proxy` before the prompt (docs/runtimes.md, Qoder), send one user
// message, broker every `can_use_tool` to a human, and end with a proved stop of the set.
// Cancel: withdraw a pending human wait (deny + interrupt), send `interrupt`, then stop the set.
import type { ContainedProcess } from "../../../platform/types.ts";
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { childEnvExtras } from "../acp/child-env.ts";
import { DENY_MESSAGE, askHuman, type ToolPermissionContext } from "../claude/permissions.ts";
import {
  HumanWaits,
  IdleWatchdog,
  TaskDiagnostics,
  abortable,
  cancelledError,
  runTurnFrame,
  stopWithProof,
  type Diagnostics,
} from "../native/turn-support.ts";
import type { AdapterResult, ProviderEventType, TaskContext } from "../types.ts";
import { QoderStream } from "./stream.ts";

const CONTROL_TIMEOUT_MS = 10_000;
const INTERRUPT_BOUND_MS = 3_000;
const MAX_ID_CHARS = 512;
/** What qodercli 1.1.52 answers when no Qoder account is logged in (docs/runtimes.md, Qoder). */
const NOT_LOGGED_IN = /not logged in|please run \/login|authentication (is )?required/i;

export interface QoderTurnOptions {
  exe: string;
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

/** The argv of one streaming qodercli turn; a new session gets an id we choose, so it is known before launch. */
export function qoderArgv(exe: string, sessionId: string, resume: boolean, model: string | null): string[] {
  return [
    exe,
    "--print",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
    "--permission-mode",
    "default",
    resume ? "--resume" : "--session-id",
    sessionId,
    ...(model !== null ? ["--model", model] : []),
  ];
}

export class QoderTurn {
  private readonly stopping = new AbortController();
  private proc: ContainedProcess | null = null;
  private stream: QoderStream | null = null;
  private sessionId: string | null = null;
  private cancelRequested = false;
  private interrupted = false;
  private resultDone!: (m: Record<string, unknown>) => void;
  private readonly result = new Promise<Record<string, unknown>>((r) => (this.resultDone = r));
  private readonly humanWaits = new HumanWaits();
  private readonly idle: IdleWatchdog;
  private readonly diagnostics: TaskDiagnostics;

  constructor(
    private readonly ctx: TaskContext,
    private readonly opts: QoderTurnOptions,
  ) {
    this.diagnostics = new TaskDiagnostics(opts.diagnostics, "qoder", ctx);
    this.idle = new IdleWatchdog(opts.agent.event_idle_timeout_seconds, (seconds) => {
      this.stream?.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `qodercli sent nothing for ${seconds} s`));
    });
  }

  cancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    this.humanWaits.abortAll();
    this.stopping.abort(cancelledError());
    void this.interrupt();
  }

  private async interrupt(): Promise<void> {
    if (this.interrupted || this.stream === null || this.stream.closed) return;
    this.interrupted = true;
    await this.stream.control({ subtype: "interrupt" }, INTERRUPT_BOUND_MS).catch(() => {});
  }

  run(): Promise<AdapterResult> {
    return runTurnFrame(this.ctx, this, this.opts.tmpRoot, `qoder-${this.ctx.runId}`, (tmpDir) => this.drive(tmpDir));
  }

  cleanup(): void {
    this.idle.clear();
  }

  private async drive(tmpDir: string): Promise<AdapterResult> {
    let out: AdapterResult;
    try {
      out = await this.converse(tmpDir);
    } catch (err) {
      const failure = this.cancelRequested ? cancelledError() : toServerfsError(err, "AGENT_PROVIDER_ERROR", "qodercli failed");
      this.stopping.abort(failure);
      await this.teardown();
      throw failure;
    }
    await this.teardown();
    return out;
  }

  private async converse(tmpDir: string): Promise<AdapterResult> {
    const resume = this.ctx.continueNativeSessionId;
    const sessionId = resume ?? crypto.randomUUID();
    // Known before launch, so a crash mid-turn stays resumable.
    this.adoptSession(sessionId);
    const env = childEnvExtras({ proxy: this.opts.agent.proxy, useProxy: this.opts.config.use_proxy, tmpDir });
    const proxy = this.opts.config.use_proxy && this.opts.agent.proxy.enabled ? this.opts.agent.proxy.url : null;
    try {
      this.proc = await this.ctx.spawn({ argv: qoderArgv(this.opts.exe, sessionId, resume !== null, this.ctx.requestedModel), env, stderrLimitBytes: 64 * 1024 });
    } catch (err) {
      if (this.cancelRequested) throw cancelledError();
      this.diagnostics.record("launch_failed", err instanceof ServerfsError ? err.code : "spawn failed");
      throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "qodercli could not be started");
    }
    this.stream = new QoderStream(this.proc, {
      onMessage: (m) => this.onMessage(m),
      onControlRequest: (id, req) => this.onControlRequest(id, req),
      onControlCancel: (id) => this.onControlCancel(id),
    });
    if (proxy !== null) {
      await this.abortable(
        this.stream.control({ subtype: "set_proxy", proxy }, CONTROL_TIMEOUT_MS).catch(() => {
          throw new ServerfsError("AGENT_RUNTIME_NOT_READY", "qodercli did not accept the Agent proxy");
        }),
      );
    }
    this.touchIdle();
    this.stream.sendUser(this.ctx.prompt);
    const result = await this.abortable(this.result);
    this.idle.clear();
    if (result.is_error === true || result.subtype !== "success") {
      if (this.cancelRequested) throw cancelledError();
      const text = typeof result.result === "string" ? result.result : "";
      this.diagnostics.record("result_error", text || String(result.subtype ?? "error"));
      if (NOT_LOGGED_IN.test(text)) throw new ServerfsError("AGENT_AUTH_REQUIRED", "qodercli is not logged in for this user; log in with qodercli (or set QODER_PAT in the provider env file)");
      throw new ServerfsError("AGENT_PROVIDER_ERROR", `qodercli ended the turn with ${typeof result.subtype === "string" ? result.subtype.slice(0, 48) : "an error"}`);
    }
    return { finalResponse: typeof result.result === "string" ? result.result : "", nativeSessionId: this.sessionId, nativeTurnId: null };
  }

  private adoptSession(raw: unknown): void {
    if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_ID_CHARS || raw === this.sessionId) return;
    this.sessionId = raw;
    this.ctx.recordNativeIds(raw, null);
  }

  private onMessage(m: Record<string, unknown>): void {
    this.touchIdle();
    if (m.type === "system" && m.subtype === "init") {
      this.adoptSession(m.session_id);
      this.emit("turn.started", {});
    } else if (m.type === "assistant") {
      const content = (m.message as { content?: unknown } | undefined)?.content;
      if (!Array.isArray(content)) return;
      for (const block of content as Array<Record<string, unknown>>) {
        if (block.type === "text" && typeof block.text === "string" && block.text.length > 0) this.emit("agent.message", { text: block.text });
        else if (block.type === "tool_use" && typeof block.name === "string") {
          const input = (block.input ?? {}) as Record<string, unknown>;
          const id = typeof block.id === "string" ? block.id : null;
          if (typeof input.command === "string") this.emit("command.started", { command: input.command.slice(0, 4096), tool_use_id: id });
          else this.emit("tool.started", { tool: block.name, tool_use_id: id });
        }
      }
    } else if (m.type === "result") {
      this.adoptSession(m.session_id);
      this.resultDone(m);
    }
  }

  private onControlRequest(requestId: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (req.subtype !== "can_use_tool") {
      this.emit("provider.request_refused", { method: String(req.subtype ?? "unknown").slice(0, 64) });
      return Promise.reject(new ServerfsError("PERMISSION_OUTSIDE_POLICY", "ServerFS does not answer this request"));
    }
    return this.humanWaits.enqueue(requestId, (withdrawn) => this.broker(req, withdrawn));
  }

  /** qodercli withdrew a request (e.g. after an interrupt): stale, never answered for the human. */
  private onControlCancel(requestId: string): void {
    this.humanWaits.withdraw(requestId, this.ctx);
  }

  private async broker(req: Record<string, unknown>, withdrawn: AbortSignal): Promise<Record<string, unknown>> {
    const refusal = { behavior: "deny", message: DENY_MESSAGE, interrupt: true };
    if (this.stopping.signal.aborted || withdrawn.aborted) return refusal;
    const tool = typeof req.tool_name === "string" ? req.tool_name : typeof req.display_name === "string" ? req.display_name : "unknown";
    const input = req.input !== null && typeof req.input === "object" && !Array.isArray(req.input) ? (req.input as Record<string, unknown>) : {};
    const context: ToolPermissionContext = {
      suggestions: Array.isArray(req.permission_suggestions) ? req.permission_suggestions : Array.isArray(req.suggestions) ? req.suggestions : undefined,
      ...(typeof req.blocked_path === "string" ? { blockedPath: req.blocked_path } : {}),
      ...(typeof req.decision_reason === "string" ? { decisionReason: req.decision_reason } : {}),
      ...(typeof req.title === "string" ? { title: req.title } : {}),
    };
    this.idle.clear();
    try {
      return (await askHuman(this.ctx, tool, input, context, withdrawn)) as Record<string, unknown>;
    } catch (err) {
      if (!this.stopping.signal.aborted && !withdrawn.aborted) this.stream?.fail(toServerfsError(err, "AGENT_PROVIDER_ERROR"));
      return refusal;
    } finally {
      this.touchIdle();
    }
  }

  private emit(type: ProviderEventType, payload: Record<string, unknown>): void {
    try {
      this.ctx.emitEvent(type, payload);
    } catch (err) {
      this.stream?.fail(toServerfsError(err, "AGENT_EVENT_TOO_LARGE"));
    }
  }

  private touchIdle(): void {
    if (this.humanWaits.size > 0 || this.stopping.signal.aborted) return;
    this.idle.restart();
  }

  private abortable<T>(p: Promise<T>): Promise<T> {
    return abortable(p, this.stopping.signal, this.stream ? this.stream.failure : null);
  }

  private async teardown(): Promise<void> {
    this.idle.clear();
    const proc = this.proc;
    if (proc === null) return;
    if (this.cancelRequested) await this.interrupt();
    this.stream?.endInput();
    if (!this.cancelRequested) await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 2000))]);
    this.stream?.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "the task ended"));
    await stopWithProof(proc, "qodercli", (kind, detail) => this.diagnostics.record(kind, detail));
  }
}
