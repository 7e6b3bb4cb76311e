// One ServerFS task (or continuation) on one ACP agent child: spawn in the task's containment
// set, initialize v1, open/resume/load the session, hand the session id to the core, apply the
// requested model, run the prompt turn while brokering permissions, and end with the child's
// transport closed and its containment set stopped. Cancellation is terminal-first (seed §14.1):
// the service has already persisted the cancel when ctx.signal aborts; here pending permissions
// are answered `cancelled`, `session/cancel` is sent, the prompt gets a bounded grace, and then
// the transport is closed and the containment set stopped.
import * as acp from "@agentclientprotocol/sdk";
import type { ContainedProcess } from "../../../platform/types.ts";
import type { AcpProfile, AgentConfig } from "../../config/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { VERSION } from "../../version.ts";
import { IdleWatchdog, TaskDiagnostics, cancelledError, runTurnFrame, type Diagnostics } from "../native/turn-support.ts";
import type { AdapterResult, TaskContext } from "../types.ts";
import { findModelOption, snapshotFrom } from "./capabilities.ts";
import { childEnvExtras } from "./child-env.ts";
import { AcpPeer, type RawSessionUpdate } from "./connection.ts";
import { UpdateMapper, type NormalizedEvent } from "./mapping.ts";
import { CANCELLED_OUTCOME, approvalFromRequest, responseForResolution } from "./permissions.ts";
import { authRequired, isAuthRefusal, privateErrorText, protocolError } from "./protocol-errors.ts";
import { closeChildInput } from "./transport.ts";

/** What the agent is told about us: the smallest set (no fs, no terminal, no elicitation). */
export const CLIENT_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
};
export const CLIENT_INFO = { name: "serverfs", version: VERSION };

/** How long replay may keep trickling in after a `session/load` answer before the prompt is sent. */
const REPLAY_QUIET_MS = 200;
const REPLAY_MAX_WAIT_MS = 3000;
/** Grace for the prompt to end after `session/cancel` (one measured agent needed 12.5 s; we bound it). */
const MAX_CANCEL_GRACE_MS = 15_000;
const STDERR_TAIL_BYTES = 64 * 1024;
const MAX_SESSION_ID_CHARS = 512;

export interface TurnOptions {
  profile: AcpProfile;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds">;
  /** Directory under the state dir that holds per-task temp directories. */
  tmpRoot: string;
  diagnostics: Diagnostics;
  /** Literal values (provider env file credentials) never to appear in diagnostics. */
  secrets?: readonly string[];
}

type Phase = "launch" | "handshake" | "session" | "turn" | "teardown";

export class AcpTurn {
  private readonly mapper = new UpdateMapper();
  /** Fires when the turn must stop waiting on the human and the agent (cancel, failure, idle). */
  private readonly stopping = new AbortController();
  private phase: Phase = "launch";
  private proc: ContainedProcess | null = null;
  private peer: AcpPeer | null = null;
  private sessionId: string | null = null;
  private replaying = false;
  private lastReplayAt = 0;
  private pendingPermissions = 0;
  private readonly idle: IdleWatchdog;
  private cancelRequested = false;
  private foreignUpdateSeen = false;
  /** Settles when the outstanding session/prompt got its answer (or the connection died). */
  private promptSettled: Promise<void> | null = null;
  private readonly diagnostics: TaskDiagnostics;

  constructor(
    private readonly ctx: TaskContext,
    private readonly opts: TurnOptions,
  ) {
    this.diagnostics = new TaskDiagnostics(opts.diagnostics, opts.profile.runtime, ctx, opts.secrets ?? []);
    this.idle = new IdleWatchdog(opts.agent.event_idle_timeout_seconds, (seconds) => {
      this.diagnostics.record("idle_timeout", `no agent traffic for ${seconds} s`);
      this.peer?.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `the agent sent nothing for ${seconds} s`));
    });
  }

  /** Cancel from outside (adapter.cancel or ctx.signal): idempotent. */
  cancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    // Aborting first answers every pending permission `cancelled`; session/cancel follows once
    // those answers are on the wire (seed §14.1 order).
    this.stopping.abort(cancelledError());
    const { sessionId, peer } = this;
    if (sessionId !== null && peer !== null) setTimeout(() => void peer.notifyCancel(sessionId), 0);
  }

  async run(): Promise<AdapterResult> {
    // Run ids may contain ':' (not a file name character on Windows).
    const tmpName = `acp-${this.ctx.runId.replace(/[^A-Za-z0-9._-]/g, "_")}`;
    try {
      return await runTurnFrame(this.ctx, this, this.opts.tmpRoot, tmpName, (tmpDir) => this.drive(tmpDir));
    } catch (err) {
      if (this.cancelRequested) throw cancelledError();
      throw toServerfsError(err, "AGENT_PROVIDER_ERROR", "the ACP agent failed");
    }
  }

  cleanup(): void {
    this.idle.clear();
  }

  private async drive(tmpDir: string): Promise<AdapterResult> {
    const { profile } = this.opts;
    const env = childEnvExtras({
      proxy: this.opts.agent.proxy,
      useProxy: profile.use_proxy,
      tmpDir,
    });
    try {
      this.proc = await this.ctx.spawn({ argv: [profile.command, ...profile.args], env, stderrLimitBytes: STDERR_TAIL_BYTES });
    } catch (err) {
      this.diagnostics.record("launch_failed", privateErrorText(err));
      throw new ServerfsError("AGENT_ACP_LAUNCH_FAILED", `the agent for runtime ${profile.runtime} could not be started`);
    }
    if (this.cancelRequested) return this.finishCancelled();
    const proc = this.proc;
    this.peer = new AcpPeer(
      proc,
      {
        onSessionUpdate: (n) => this.onUpdate(n),
        onPermissionRequest: (params) => this.onPermission(params),
        onRefusedRequest: (method) => {
          this.diagnostics.record("request_refused", method);
          this.emit([{ type: "acp.request_refused", payload: { method } }]);
        },
        onActivity: () => this.touchIdle(),
        onDiagnostic: (kind, detail) => this.diagnostics.record(kind, detail),
      },
      () => this.exitError(),
    );
    try {
      const result = await this.converse();
      await this.teardown(false);
      return result;
    } catch (err) {
      const failure = this.cancelRequested ? cancelledError() : toServerfsError(err, "AGENT_PROVIDER_ERROR", "the ACP agent failed");
      if (!this.cancelRequested) this.stopping.abort(failure);
      if (!this.cancelRequested && !(err instanceof ServerfsError)) this.diagnostics.record("unexpected_error", privateErrorText(err));
      await this.teardown(true);
      throw failure;
    }
  }

  private async converse(): Promise<AdapterResult> {
    const peer = this.peer!;
    const { profile } = this.opts;
    this.phase = "handshake";
    const init = await this.abortable(
      peer.request(
        acp.methods.agent.initialize,
        { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: CLIENT_CAPABILITIES, clientInfo: CLIENT_INFO },
        {
          timeoutMs: profile.probe_timeout_seconds * 1000,
          onTimeout: () =>
            new ServerfsError("AGENT_ACP_LAUNCH_FAILED", `the agent did not answer initialize within ${profile.probe_timeout_seconds} s`),
          mapError: (err) => {
            this.diagnostics.record("initialize_refused", privateErrorText(err));
            return new ServerfsError("AGENT_ACP_PROTOCOL_UNSUPPORTED", "the agent refused ACP protocol version 1");
          },
        },
      ),
    );
    // Responses are not schema-checked by the SDK: a non-object answer is not an ACP handshake.
    if (init === null || typeof init !== "object") throw protocolError("initialize returned no result object");
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
      const offered = typeof init.protocolVersion === "number" ? init.protocolVersion : null;
      throw new ServerfsError("AGENT_ACP_PROTOCOL_UNSUPPORTED", "the agent does not speak ACP protocol version 1", {
        agent_protocol_version: offered,
      });
    }

    this.phase = "session";
    const sessionResponse = this.ctx.continueNativeSessionId === null ? await this.newSession() : await this.continueSession(init);
    this.ctx.saveCapabilities(profile.fingerprint, snapshotFrom(init, sessionResponse));
    if (this.ctx.requestedModel !== null) await this.applyModel(this.ctx.requestedModel, sessionResponse);

    this.phase = "turn";
    this.ctx.emitEvent("turn.started", { runtime: profile.runtime });
    this.touchIdle();
    const prompt = peer.request(acp.methods.agent.session.prompt, {
      sessionId: this.sessionId!,
      prompt: [{ type: "text", text: this.ctx.prompt }],
    });
    this.promptSettled = prompt.then(
      () => undefined,
      () => undefined,
    );
    const response = await this.abortable(prompt);
    this.idle.clear();
    const done = this.mapper.finish();
    this.emit(done.events);
    const stop = response !== null && typeof response === "object" ? (response as { stopReason?: unknown }).stopReason : undefined;
    if (stop !== "end_turn") {
      if (stop === "cancelled" && this.cancelRequested) throw cancelledError();
      throw new ServerfsError("AGENT_PROVIDER_ERROR", `the agent ended the turn without finishing (${typeof stop === "string" ? stop.slice(0, 32) : "no stop reason"})`, {
        stop_reason: typeof stop === "string" ? stop.slice(0, 32) : null,
      });
    }
    if (this.mapper.resultTooLarge) throw new ServerfsError("AGENT_RESULT_TOO_LARGE", "the agent's answer exceeds the 8 MiB result limit");
    return { finalResponse: done.finalResponse, nativeSessionId: this.sessionId, nativeTurnId: null };
  }

  private async newSession(): Promise<{ configOptions?: unknown }> {
    const res = await this.abortable(
      this.peer!.request(acp.methods.agent.session.new, { cwd: this.ctx.cwd, mcpServers: [] }, { mapError: (err) => this.sessionRefused("session/new", err) }),
    );
    const id = res !== null && typeof res === "object" ? (res as { sessionId?: unknown }).sessionId : undefined;
    if (typeof id !== "string" || id.length === 0 || id.length > MAX_SESSION_ID_CHARS) throw protocolError("session/new returned no usable sessionId");
    this.adoptSession(id);
    return res;
  }

  private async continueSession(init: acp.InitializeResponse): Promise<{ configOptions?: unknown }> {
    const id = this.ctx.continueNativeSessionId!;
    const caps = snapshotFrom(init, null);
    const params = { sessionId: id, cwd: this.ctx.cwd, mcpServers: [] };
    if (caps.resume_session) {
      this.adoptSession(id);
      const res = await this.abortable(this.peer!.request(acp.methods.agent.session.resume, params, { mapError: (err) => this.sessionRefused("session/resume", err) }));
      return (res ?? {}) as { configOptions?: unknown };
    }
    if (caps.load_session) {
      // History comes back as session/update traffic, some of it possibly after the answer:
      // none of it is this task's output. Wait until it has gone quiet before prompting.
      this.replaying = true;
      this.lastReplayAt = Date.now();
      this.adoptSession(id);
      const res = await this.abortable(this.peer!.request(acp.methods.agent.session.load, params, { mapError: (err) => this.sessionRefused("session/load", err) }));
      const started = Date.now();
      this.lastReplayAt = Math.max(this.lastReplayAt, started);
      while (Date.now() - this.lastReplayAt < REPLAY_QUIET_MS && Date.now() - started < REPLAY_MAX_WAIT_MS) {
        await this.abortable(new Promise((r) => setTimeout(r, REPLAY_QUIET_MS / 4)));
      }
      this.replaying = false;
      return (res ?? {}) as { configOptions?: unknown };
    }
    throw new ServerfsError(
      "AGENT_CONTINUATION_UNSUPPORTED",
      `runtime ${this.opts.profile.runtime} advertises neither session/resume nor session/load; submit a new task instead`,
    );
  }

  /** The session id is persisted before anything else can happen in the session. */
  private adoptSession(id: string): void {
    this.sessionId = id;
    this.ctx.recordNativeIds(id, null);
  }

  private sessionRefused(method: string, err: unknown): ServerfsError {
    this.diagnostics.record("session_refused", `${method}: ${privateErrorText(err)}`);
    if (isAuthRefusal(err)) return authRequired();
    if (method !== "session/new") {
      return new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", `the agent could not restore the session (${method} failed)`);
    }
    const code = err instanceof acp.RequestError ? err.code : null;
    return new ServerfsError("AGENT_PROVIDER_ERROR", `the agent refused to open a session${code === null ? "" : ` (JSON-RPC ${code})`}`);
  }

  private async applyModel(model: string, sessionResponse: { configOptions?: unknown }): Promise<void> {
    const option = findModelOption(sessionResponse.configOptions);
    if (option === null) {
      throw new ServerfsError("AGENT_MODEL_UNSUPPORTED", `runtime ${this.opts.profile.runtime} offers no model selector; submit without a model`);
    }
    if (!option.values.some((v) => v.value === model)) {
      throw new ServerfsError("AGENT_MODEL_UNSUPPORTED", "the requested model is not one the agent offers (see list_agent_models)");
    }
    const res = await this.abortable(
      this.peer!.request(
        acp.methods.agent.session.setConfigOption,
        { sessionId: this.sessionId!, configId: option.id, value: model },
        {
          mapError: (err) => {
            this.diagnostics.record("model_refused", privateErrorText(err));
            return new ServerfsError("AGENT_MODEL_UNSUPPORTED", "the agent refused the requested model");
          },
        },
      ),
    );
    const after = findModelOption((res as { configOptions?: unknown } | null)?.configOptions);
    if (after === null || after.id !== option.id || after.currentValue !== model) {
      throw new ServerfsError("AGENT_MODEL_UNSUPPORTED", "the agent did not switch to the requested model");
    }
  }

  private onUpdate(n: RawSessionUpdate): void {
    if (this.sessionId === null || n.sessionId !== this.sessionId) {
      if (!this.foreignUpdateSeen) this.diagnostics.record("foreign_session_update", "updates for another session were ignored");
      this.foreignUpdateSeen = true;
      return;
    }
    if (this.replaying) {
      this.lastReplayAt = Date.now();
      return;
    }
    if (this.phase !== "turn") return;
    this.emit(this.mapper.push(n.update));
  }

  private async onPermission(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    if (this.stopping.signal.aborted || this.phase !== "turn" || params.sessionId !== this.sessionId) return CANCELLED_OUTCOME;
    this.emit(this.mapper.permissionRequested(params.toolCall));
    let payload;
    try {
      payload = approvalFromRequest(params);
    } catch (err) {
      this.peer?.fail(toServerfsError(err, "AGENT_ACP_PROTOCOL_ERROR"));
      return CANCELLED_OUTCOME;
    }
    this.pendingPermissions++;
    this.idle.clear();
    try {
      const { category, title, available_decisions, response_options, file_changes, tool_input } = payload;
      const resolution = await this.abortable(
        this.ctx.requestApproval({
          category,
          title,
          available_decisions,
          response_options,
          ...(file_changes ? { file_changes } : {}),
          ...(payload.tool_kind ? { tool: payload.tool_kind } : {}),
          ...(tool_input !== undefined ? { tool_input } : {}),
        }),
      );
      return responseForResolution(payload, resolution);
    } catch (err) {
      // Expiry, a stale request or cancellation: the agent hears `cancelled`, and unless this is
      // a cancel (already terminal) the turn ends with the interaction's error.
      if (!this.stopping.signal.aborted) this.peer?.fail(toServerfsError(err, "AGENT_PROVIDER_ERROR"));
      return CANCELLED_OUTCOME;
    } finally {
      this.pendingPermissions--;
      this.touchIdle();
    }
  }

  /** Emit events; a bound the service enforces (size, count) ends the turn with its error. */
  private emit(events: NormalizedEvent[]): void {
    try {
      for (const e of events) this.ctx.emitEvent(e.type, e.payload);
    } catch (err) {
      this.peer?.fail(toServerfsError(err, "AGENT_EVENT_TOO_LARGE"));
    }
  }

  private touchIdle(): void {
    if (this.phase !== "turn" || this.pendingPermissions > 0 || this.stopping.signal.aborted) return;
    this.idle.restart();
  }

  /** Race `p` against cancellation and the connection's failure. */
  private async abortable<T>(p: Promise<T>): Promise<T> {
    const signal = this.stopping.signal;
    if (signal.aborted) throw signal.reason;
    let onAbort: (() => void) | null = null;
    try {
      return await Promise.race([
        p,
        this.peer ? this.peer.failure : new Promise<never>(() => {}),
        new Promise<never>((_, reject) => {
          onAbort = () => reject(signal.reason);
          signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
    } finally {
      if (onAbort !== null) signal.removeEventListener("abort", onAbort);
    }
  }

  private exitError(): ServerfsError {
    if (this.phase === "launch" || this.phase === "handshake") {
      return new ServerfsError("AGENT_ACP_LAUNCH_FAILED", "the agent exited or closed its output before answering initialize");
    }
    return new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "the agent exited or closed its output during the task");
  }

  private finishCancelled(): Promise<never> {
    return this.teardown(true).then(() => {
      throw cancelledError();
    });
  }

  /**
   * End the child. After a cancel or failure: `session/cancel` (already sent by cancel()), a
   * bounded grace for the prompt to end, then the transport is closed and the set stopped. After
   * success: close stdin and give the agent its shutdown grace to exit on its own first.
   */
  private async teardown(abnormal: boolean): Promise<void> {
    this.phase = "teardown";
    this.idle.clear();
    const proc = this.proc;
    const graceMs = this.opts.profile.shutdown_timeout_seconds * 1000;
    if (proc === null) return;
    if (abnormal && this.sessionId !== null && this.peer !== null && !this.peer.transportDead) {
      if (!this.cancelRequested) await this.peer.notifyCancel(this.sessionId);
      if (this.promptSettled !== null) {
        await Promise.race([this.promptSettled, proc.exited, new Promise((r) => setTimeout(r, Math.min(graceMs, MAX_CANCEL_GRACE_MS)))]);
      }
    }
    this.peer?.close();
    closeChildInput(proc);
    if (!abnormal) await Promise.race([proc.exited, new Promise((r) => setTimeout(r, graceMs))]);
    const evidence = await proc.stop(Math.min(graceMs, 2000));
    const tail = proc.stderrTail();
    if (tail.length > 0) this.diagnostics.record("stderr_tail", new TextDecoder().decode(tail));
    if (!evidence.proved) {
      this.diagnostics.record("stop_not_proved", `${evidence.survivors.length} member(s) still alive`);
      throw new ServerfsError("STOP_NOT_PROVED", "the agent's processes could not be proved stopped", {
        survivors: evidence.survivors.length,
      });
    }
  }
}
