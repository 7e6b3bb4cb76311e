// The one turn skeleton every provider turn (ACP, Codex, Claude, Qoder) runs around its own
// protocol (docs/runtimes.md "One turn skeleton"). A runtime supplies only:
//   launch   — start its child in the task's containment set (and wire up its connection);
//   converse — the protocol itself, from handshake to the turn's result;
//   interrupt — ask the provider to stop the running turn (best effort, bounded);
//   close    — end the conversation and the child's input, before the child is stopped.
// Everything else lives here: the run frame (private temp dir, already-cancelled tasks, abort
// wiring), the event-idle watchdog, private diagnostics, terminal-first cancel (pending human
// waits withdrawn, the turn interrupted, the child stopped with proof), failure shaping and the
// result.
import type { ContainedProcess } from "../../../platform/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import type { AdapterResult, ProviderEventType, TaskContext } from "../types.ts";
import { privateErrorText } from "./private-error.ts";
import { HumanWaits, IdleWatchdog, TaskDiagnostics, abortable, cancelledError, idleTimeoutError, runTurnFrame, type Diagnostics } from "./turn-support.ts";

/** Provider session, thread and turn ids longer than this are not ids. */
export const MAX_NATIVE_ID_CHARS = 512;
const STDERR_TAIL_BYTES = 64 * 1024;

export interface TurnBaseOptions {
  /** The runtime name diagnostics are filed under ("codex", "acp-<id>"). */
  runtime: string;
  /** The provider as public messages name it ("codex", "the agent"). */
  provider: string;
  /** Public message when the turn fails for a reason that is not a ServerfsError. */
  failedText: string;
  /** Prefix of the per-task temp directory's name. */
  tmpPrefix: string;
  tmpRoot: string;
  idleSeconds: number | null;
  diagnostics: Diagnostics;
  /** Literal values (provider env file credentials) never to appear in diagnostics. */
  secrets?: readonly string[];
}

export abstract class ProviderTurn {
  /** Fires when the turn must stop waiting on the human and the provider (cancel, failure). */
  protected readonly stopping = new AbortController();
  protected cancelRequested = false;
  /** The provider child, once launched. */
  protected proc: ContainedProcess | null = null;
  /** The provider's own session (Codex: thread) id, once known. */
  protected sessionId: string | null = null;
  /** Provider requests waiting on a human, brokered one after another. */
  protected readonly humanWaits = new HumanWaits();
  protected readonly diagnostics: TaskDiagnostics;
  protected readonly idle: IdleWatchdog;
  /** Brokers running right now: while one is, the idle bound is off (a human may take long). */
  private humanBusy = 0;

  constructor(
    protected readonly ctx: TaskContext,
    private readonly base: TurnBaseOptions,
  ) {
    this.diagnostics = new TaskDiagnostics(base.diagnostics, base.runtime, ctx, base.secrets ?? []);
    this.idle = new IdleWatchdog(base.idleSeconds, (seconds) => {
      this.diagnostics.record("idle_timeout", `no provider traffic for ${seconds} s`);
      this.fail(idleTimeoutError(base.provider, seconds, ctx.lastEvent(), Date.now()));
    });
  }

  /** Start the child (setting `proc`) and its connection. */
  protected abstract launch(tmpDir: string): Promise<void>;
  /** The protocol, from handshake to the turn's result. */
  protected abstract converse(): Promise<AdapterResult>;
  /** Ask the provider to stop the running turn; idempotent, bounded, never throws. */
  protected abstract interrupt(): Promise<void>;
  /** End the conversation and the child's input (`abnormal`: after a cancel or a failure). */
  protected abstract close(abnormal: boolean): Promise<void>;
  /** End the turn with `err`: every wait on the provider rejects with it. */
  protected abstract fail(err: ServerfsError): void;
  /** The provider connection's failure, raced by `abortable` (null before there is one). */
  protected abstract connectionFailure(): Promise<never> | null;

  /** How long the child may take to exit on its own after close(); 0 = not waited for. */
  protected exitGraceMs(_abnormal: boolean): number {
    return this.cancelRequested ? 0 : 2000;
  }
  /** Grace `stop()` gives the containment set before it kills. */
  protected stopGraceMs(): number {
    return 1000;
  }
  /** After the exit grace, before the stop (Claude's SDK abort). */
  protected afterExitGrace(): void {}
  /** Whether provider traffic may (re)start the idle bound at this point of the protocol. */
  protected idleArmed(): boolean {
    return true;
  }
  /** Extra clean-up after the run, whatever its end. */
  protected onCleanup(): void {}
  /** The child to stop; Claude's is started by its SDK and known only once spawned. */
  protected async child(): Promise<ContainedProcess | null> {
    return this.proc;
  }
  /** The public error a failed turn ends with. */
  protected failureFor(err: unknown): ServerfsError {
    return toServerfsError(err, "AGENT_PROVIDER_ERROR", this.base.failedText);
  }

  /** Cancel from outside (adapter.cancel or ctx.signal): idempotent, terminal-first. */
  cancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    this.humanWaits.abortAll();
    this.stopping.abort(cancelledError());
    void this.interrupt();
  }

  async run(): Promise<AdapterResult> {
    // Run ids may contain ':' (not a file name character on Windows).
    const tmpName = `${this.base.tmpPrefix}-${this.ctx.runId.replace(/[^A-Za-z0-9._-]/g, "_")}`;
    try {
      return await runTurnFrame(this.ctx, this, this.base.tmpRoot, tmpName, (tmpDir) => this.drive(tmpDir));
    } catch (err) {
      if (this.cancelRequested) throw cancelledError();
      throw toServerfsError(err, "AGENT_PROVIDER_ERROR", this.base.failedText);
    }
  }

  /** After the run, whatever its end: no idle timer left. */
  cleanup(): void {
    this.idle.clear();
    this.onCleanup();
  }

  private async drive(tmpDir: string): Promise<AdapterResult> {
    let result: AdapterResult;
    try {
      await this.launch(tmpDir);
      if (this.cancelRequested) throw cancelledError();
      result = await this.converse();
    } catch (err) {
      const failure = this.cancelRequested ? cancelledError() : this.failureFor(err);
      if (!this.cancelRequested && !(err instanceof ServerfsError)) this.diagnostics.record("unexpected_error", privateErrorText(err));
      this.stopping.abort(failure);
      await this.teardown(true);
      throw failure;
    }
    await this.teardown(false);
    return result;
  }

  /** close(), the child's exit grace, then its containment set stopped with proof. */
  private async teardown(abnormal: boolean): Promise<void> {
    this.idle.clear();
    await this.close(abnormal);
    const proc = await this.child();
    if (proc === null) return;
    const graceMs = this.exitGraceMs(abnormal);
    if (graceMs > 0) await Promise.race([proc.exited, new Promise((r) => setTimeout(r, graceMs))]);
    this.afterExitGrace();
    const evidence = await proc.stop(this.stopGraceMs());
    const tail = proc.stderrTail();
    if (tail.length > 0) this.diagnostics.record("stderr_tail", new TextDecoder().decode(tail));
    if (!evidence.proved) {
      this.diagnostics.record("stop_not_proved", `${evidence.survivors.length} member(s) still alive`);
      throw new ServerfsError("STOP_NOT_PROVED", `${this.base.provider}'s processes could not be proved stopped`, { survivors: evidence.survivors.length });
    }
  }

  /** Start the provider child in the task's containment set; a failure is `failure`, its cause private. */
  protected async spawnChild(argv: string[], env: Record<string, string>, failure: ServerfsError): Promise<ContainedProcess> {
    try {
      this.proc = await this.ctx.spawn({ argv, env, stderrLimitBytes: STDERR_TAIL_BYTES });
      return this.proc;
    } catch (err) {
      if (this.cancelRequested) throw cancelledError();
      this.diagnostics.record("launch_failed", privateErrorText(err));
      throw failure;
    }
  }

  /**
   * Adopt the provider's session id: persisted before anything else can happen in the session, so
   * a crash mid-turn stays resumable. False for an unusable id or the one already adopted.
   */
  protected adoptSession(raw: unknown): boolean {
    if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_NATIVE_ID_CHARS || raw === this.sessionId) return false;
    this.sessionId = raw;
    this.ctx.recordNativeIds(raw, null);
    return true;
  }

  /** The turn's result: the final answer and the ids a continuation resumes. */
  protected finished(finalResponse: string, nativeTurnId: string | null = null): AdapterResult {
    return { finalResponse, nativeSessionId: this.sessionId, nativeTurnId };
  }

  /** `p`, unless the turn starts stopping or the provider connection fails first. */
  protected abortable<T>(p: Promise<T>): Promise<T> {
    return abortable(p, this.stopping.signal, this.connectionFailure());
  }

  /** Emit one event; a bound the service enforces (size, count) ends the turn with its error. */
  protected emit(type: ProviderEventType, payload: Record<string, unknown>): boolean {
    try {
      this.ctx.emitEvent(type, payload);
      return true;
    } catch (err) {
      this.fail(toServerfsError(err, "AGENT_EVENT_TOO_LARGE"));
      return false;
    }
  }

  /** Provider traffic: restart the idle bound unless a human is deciding or the turn is ending. */
  protected touchIdle(): void {
    if (!this.idleArmed() || this.humanBusy > 0 || this.stopping.signal.aborted) return;
    this.idle.restart();
  }

  /** Run one wait on a human with the idle bound off, and on again once it is answered. */
  protected async withHuman<T>(ask: () => Promise<T>): Promise<T> {
    this.humanBusy++;
    this.idle.clear();
    try {
      return await ask();
    } finally {
      this.humanBusy--;
      this.touchIdle();
    }
  }
}
