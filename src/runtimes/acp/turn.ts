// One ServerFS task (or continuation) on one ACP agent child: spawn in the task's containment
// set, initialize v1, open/resume/load the session, hand the session id to the core, apply the
// requested model, run the prompt turn while brokering permissions, and end with the child's
// transport closed and its containment set stopped. Cancellation is terminal-first (docs/runtimes.md):
// the service has already persisted the cancel when ctx.signal aborts; here pending permissions
// are answered `cancelled`, `session/cancel` is sent, the prompt gets a bounded grace, and then
// the transport is closed and the containment set stopped.
import * as acp from "@agentclientprotocol/sdk";
import type { AcpProfile, AgentConfig } from "../../config/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { VERSION } from "../../version.ts";
import { ProviderTurn } from "../kernel/provider-turn.ts";
import { cancelledError, type Diagnostics } from "../kernel/turn-support.ts";
import type { AdapterResult, TaskContext } from "../types.ts";
import { findModelOption, snapshotFrom } from "./capabilities.ts";
import { childEnvExtras } from "../kernel/child-env.ts";
import { AcpPeer, type RawSessionUpdate } from "./connection.ts";
import { UpdateMapper, type NormalizedEvent } from "./mapping.ts";
import { CANCELLED_OUTCOME, approvalFromRequest, responseForResolution } from "./permissions.ts";
import { authRequired, isAuthRefusal, protocolError } from "./protocol-errors.ts";
import { privateErrorText } from "../kernel/private-error.ts";
import { closeChildInput } from "../kernel/child-input.ts";
import { CANCEL_RESPONSE, FORM_ELICITATION_CAPABILITY, declineResponse, questionFromElicitation, responseForAnswer } from "./elicitation.ts";
import { MAX_SESSION_CLOSE_MS, advertisesSessionClose } from "./session-close.ts";

/**
 * What the agent is told about us: the smallest set (no fs, no terminal), plus form elicitation,
 * whose schemas serverfs checks with a complete bounded validator. URL elicitation stays closed.
 */
export const CLIENT_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
  elicitation: FORM_ELICITATION_CAPABILITY,
};
export const CLIENT_INFO = { name: "serverfs", version: VERSION };

/** How long replay may keep trickling in after a `session/load` answer before the prompt is sent. */
const REPLAY_QUIET_MS = 200;
const REPLAY_MAX_WAIT_MS = 3000;
/** Grace for the prompt to end after `session/cancel` (one measured agent needed 12.5 s; we bound it). */
const MAX_CANCEL_GRACE_MS = 15_000;

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

export class AcpTurn extends ProviderTurn {
  private readonly mapper = new UpdateMapper();
  private phase: Phase = "launch";
  private peer: AcpPeer | null = null;
  private replaying = false;
  private lastReplayAt = 0;
  private foreignUpdateSeen = false;
  /** Settles when the outstanding session/prompt got its answer (or the connection died). */
  private promptSettled: Promise<void> | null = null;
  /** Requests waiting on a human, in arrival order (see untilWithdrawn). */
  private humanQueue: Promise<unknown> = Promise.resolve();
  /** The agent advertised `session/close` (session hygiene at the end of the task). */
  private closeAdvertised = false;

  constructor(
    ctx: TaskContext,
    private readonly opts: TurnOptions,
  ) {
    super(ctx, {
      runtime: opts.profile.runtime,
      provider: "the agent",
      failedText: "the ACP agent failed",
      tmpPrefix: "acp",
      tmpRoot: opts.tmpRoot,
      idleSeconds: opts.agent.event_idle_timeout_seconds,
      diagnostics: opts.diagnostics,
      secrets: opts.secrets ?? [],
    });
  }

  /**
   * `session/cancel`, once the `cancelled` answers to pending permissions (the kernel aborts them
   * first) are on the wire: the order docs/runtimes.md gives for a cancel.
   */
  protected override async interrupt(): Promise<void> {
    const { sessionId, peer } = this;
    if (sessionId !== null && peer !== null) setTimeout(() => void peer.notifyCancel(sessionId), 0);
  }

  protected override fail(err: ServerfsError): void {
    this.peer?.fail(err);
  }

  protected override connectionFailure(): Promise<never> | null {
    return this.peer ? this.peer.failure : null;
  }

  protected override idleArmed(): boolean {
    return this.phase === "turn";
  }

  protected override async launch(tmpDir: string): Promise<void> {
    const { profile } = this.opts;
    const env = childEnvExtras({
      proxy: this.opts.agent.proxy,
      useProxy: profile.use_proxy,
      tmpDir,
      tmpDirVariables: profile.tmpdir_env ?? [],
    });
    const proc = await this.spawnChild(
      [profile.command, ...profile.args],
      env,
      new ServerfsError("AGENT_ACP_LAUNCH_FAILED", `the agent for runtime ${profile.runtime} could not be started`),
    );
    if (this.cancelRequested) return;
    this.peer = new AcpPeer(
      proc,
      {
        onSessionUpdate: (n) => this.onUpdate(n),
        onPermissionRequest: (params, signal) => this.onPermission(params, signal),
        onElicitation: (params, signal) => this.onElicitation(params, signal),
        onRefusedRequest: (method) => {
          this.diagnostics.record("request_refused", method);
          this.emitAll([{ type: "acp.request_refused", payload: { method } }]);
        },
        onActivity: () => this.touchIdle(),
        onDiagnostic: (kind, detail) => this.diagnostics.record(kind, detail),
      },
      () => this.exitError(),
    );
  }

  protected override async converse(): Promise<AdapterResult> {
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

    this.closeAdvertised = advertisesSessionClose(init);
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
    this.emitAll(done.events);
    const stop = response !== null && typeof response === "object" ? (response as { stopReason?: unknown }).stopReason : undefined;
    if (stop !== "end_turn") {
      if (stop === "cancelled" && this.cancelRequested) throw cancelledError();
      throw new ServerfsError("AGENT_PROVIDER_ERROR", `the agent ended the turn without finishing (${typeof stop === "string" ? stop.slice(0, 32) : "no stop reason"})`, {
        stop_reason: typeof stop === "string" ? stop.slice(0, 32) : null,
      });
    }
    if (this.mapper.resultTooLarge) throw new ServerfsError("AGENT_RESULT_TOO_LARGE", "the agent's answer exceeds the 8 MiB result limit");
    return this.finished(done.finalResponse);
  }

  private async newSession(): Promise<{ configOptions?: unknown }> {
    const res = await this.abortable(
      this.peer!.request(acp.methods.agent.session.new, { cwd: this.ctx.cwd, mcpServers: [] }, { mapError: (err) => this.sessionRefused("session/new", err) }),
    );
    const id = res !== null && typeof res === "object" ? (res as { sessionId?: unknown }).sessionId : undefined;
    if (!this.adoptSession(id)) throw protocolError("session/new returned no usable sessionId");
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
    this.emitAll(this.mapper.push(n.update));
  }

  private async onPermission(params: acp.RequestPermissionRequest, withdrawn: AbortSignal): Promise<acp.RequestPermissionResponse> {
    if (this.stopping.signal.aborted || this.phase !== "turn" || params.sessionId !== this.sessionId) return CANCELLED_OUTCOME;
    this.emitAll(this.mapper.permissionRequested(params.toolCall));
    let payload;
    try {
      payload = approvalFromRequest(params);
    } catch (err) {
      this.peer?.fail(toServerfsError(err, "AGENT_ACP_PROTOCOL_ERROR"));
      return CANCELLED_OUTCOME;
    }
    try {
      const { category, title, available_decisions, response_options, file_changes, tool_input } = payload;
      const request = {
        category,
        title,
        available_decisions,
        response_options,
        ...(file_changes ? { file_changes } : {}),
        ...(payload.tool_kind ? { tool: payload.tool_kind } : {}),
        ...(tool_input !== undefined ? { tool_input } : {}),
      };
      const resolution = await this.withHuman(() => this.untilWithdrawn(withdrawn, () => this.abortable(this.ctx.requestApproval(request))));
      return responseForResolution(payload, resolution);
    } catch (err) {
      // The agent took the request back: it is stale on our side, the turn goes on.
      if (withdrawn.aborted) throw withdrawn.reason;
      // Expiry, a stale request or cancellation: the agent hears `cancelled`, and unless this is
      // a cancel (already terminal) the turn ends with the interaction's error.
      if (!this.stopping.signal.aborted) this.peer?.fail(toServerfsError(err, "AGENT_PROVIDER_ERROR"));
      return CANCELLED_OUTCOME;
    }
  }

  /** An agent's form question (`elicitation/create`): declined with a reason, or put to the human. */
  private async onElicitation(params: unknown, withdrawn: AbortSignal): Promise<acp.CreateElicitationResponse> {
    if (this.stopping.signal.aborted || this.phase !== "turn") return CANCEL_RESPONSE;
    const asked = questionFromElicitation(params, this.sessionId);
    if ("decline" in asked) {
      this.diagnostics.record("elicitation_declined", `${asked.decline.code}/${asked.decline.reason}`);
      this.emitAll([{ type: "acp.elicitation_declined", payload: { code: asked.decline.code, reason: asked.decline.reason } }]);
      return declineResponse(asked.decline);
    }
    try {
      const resolution = await this.withHuman(() => this.untilWithdrawn(withdrawn, () => this.abortable(this.ctx.askQuestion(asked.question))));
      return responseForAnswer(resolution);
    } catch (err) {
      if (withdrawn.aborted) throw withdrawn.reason;
      // As for a permission: expiry or a stale request ends the turn with its error; the agent hears cancel.
      if (!this.stopping.signal.aborted) this.peer?.fail(toServerfsError(err, "AGENT_PROVIDER_ERROR"));
      return CANCEL_RESPONSE;
    }
  }

  /**
   * Agent requests that wait on a human are brokered one at a time (a task holds one pending
   * interaction). `$/cancel_request` for one aborts `withdrawn`: if it is the pending one, it goes
   * stale (a late answer gets REQUEST_STALE); if it is still queued, it is never asked.
   */
  private untilWithdrawn<T>(withdrawn: AbortSignal, ask: () => Promise<T>): Promise<T> {
    const turn = this.humanQueue.then(async () => {
      if (withdrawn.aborted) throw withdrawn.reason;
      let onAbort: (() => void) | null = null;
      const gone = new Promise<never>((_, reject) => {
        onAbort = () => {
          this.ctx.abandonInteraction();
          reject(withdrawn.reason);
        };
        withdrawn.addEventListener("abort", onAbort, { once: true });
      });
      try {
        return await Promise.race([ask(), gone]);
      } finally {
        if (onAbort) withdrawn.removeEventListener("abort", onAbort);
      }
    });
    this.humanQueue = turn.catch(() => {});
    return turn;
  }

  /** Emit events in order; the first one a service bound refuses ends the turn (and the list). */
  private emitAll(events: NormalizedEvent[]): void {
    for (const e of events) if (!this.emit(e.type, e.payload)) return;
  }

  private exitError(): ServerfsError {
    if (this.phase === "launch" || this.phase === "handshake") {
      return new ServerfsError("AGENT_ACP_LAUNCH_FAILED", "the agent exited or closed its output before answering initialize");
    }
    return new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "the agent exited or closed its output during the task");
  }

  private get graceMs(): number {
    return this.opts.profile.shutdown_timeout_seconds * 1000;
  }

  protected override exitGraceMs(abnormal: boolean): number {
    return abnormal ? 0 : this.graceMs;
  }

  protected override stopGraceMs(): number {
    return Math.min(this.graceMs, 2000);
  }

  /**
   * End the conversation. After a cancel or failure: `session/cancel` (already sent by cancel()),
   * a bounded grace for the prompt to end, then the transport is closed. After success: close
   * stdin; the kernel gives the agent its shutdown grace to exit on its own first. Either way an
   * agent that advertised `session/close` is sent it first (session-close.ts).
   */
  protected override async close(abnormal: boolean): Promise<void> {
    this.phase = "teardown";
    const proc = this.proc;
    if (proc === null) return;
    if (abnormal && this.sessionId !== null && this.peer !== null && !this.peer.transportDead) {
      if (!this.cancelRequested) await this.peer.notifyCancel(this.sessionId);
      if (this.promptSettled !== null) {
        await Promise.race([this.promptSettled, proc.exited, new Promise((r) => setTimeout(r, Math.min(this.graceMs, MAX_CANCEL_GRACE_MS)))]);
      }
    }
    if (this.closeAdvertised && this.sessionId !== null && this.peer !== null) {
      const closed = await this.peer.closeSession(this.sessionId, Math.min(this.graceMs, MAX_SESSION_CLOSE_MS));
      this.diagnostics.record(closed ? "session_closed" : "session_close_failed", "session/close at the end of the task");
    }
    this.peer?.close();
    closeChildInput(proc);
  }
}
