// One task's run in this process (docs/design/task-lifecycle.md): it owns the abort, the timers,
// the interaction waiter, the provider processes, and the stop-then-release at the end.
// Terminal-first: the terminal status is persisted before the provider is stopped, and the lease
// or recovery guard is released only after the platform proved the stop (docs/design/lease-and-guard.md).
import { ServerfsError, toServerfsError } from "../../errors.ts";
import type { TaskProfile } from "../../config/types.ts";
import type { StopEvidence } from "../../../platform/types.ts";
import type { AdapterResult, RuntimeAdapter, TaskContext } from "../../runtimes/types.ts";
import { utf8Bytes, utf8Prefix } from "../../common/utf8.ts";
import { sha256Hex } from "../ids.ts";
import { removeGuard, updateGuard } from "../guard.ts";
import { isTerminal, isWaiting, type TaskStatus } from "../lifecycle.ts";
import { PROVIDER_CANCEL_BOUND_MS } from "../limits.ts";
import type { Redactor } from "../../runtimes/kernel/redact.ts";
import { writeSpool } from "../spool.ts";
import { bounded, type ServiceCore } from "./core.ts";
import { isEventName, type TaskEventType } from "./events.ts";
import type { AbortReason, ActiveRun, RunBroker } from "./active-run.ts";
import { RunProcesses } from "./run-processes.ts";

export type { AbortReason };

const TERMINAL_FOR_REASON: Record<AbortReason, { status: TaskStatus; code: string | null }> = {
  cancel: { status: "cancelled", code: null },
  timeout: { status: "interrupted", code: "AGENT_TASK_TIMED_OUT" },
  interaction_timeout: { status: "interrupted", code: "AGENT_INTERACTION_TIMED_OUT" },
  shutdown: { status: "interrupted", code: "BRIDGE_SHUTDOWN" },
};

const MESSAGE_FOR_CODE: Record<string, string> = {
  AGENT_TASK_TIMED_OUT: "the task reached its deadline",
  AGENT_INTERACTION_TIMED_OUT: "nobody answered the pending interaction in time",
  BRIDGE_SHUTDOWN: "the Bridge shut down while the task was active",
};

type Outcome = { kind: "ok"; value: AdapterResult } | { kind: "error"; error: unknown } | { kind: "abandoned" };

interface Waiter {
  requestId: string;
  resolve: (value: unknown) => void;
  reject: (err: ServerfsError) => void;
}

/** What admission decided for the run. */
export interface RunPlan {
  taskId: string;
  alias: string;
  runtime: string;
  /** Set for workspace-write tasks: the recovery guard this run holds with the writer lease. */
  guardFile: string | null;
  prompt: string;
  root: string;
  cwd: string;
  relativeCwd: string;
  profile: TaskProfile;
  requestedModel: string | null;
  continueSessionId: string | null;
  runId: string;
}

export class TaskRun implements ActiveRun {
  readonly taskId: string;
  readonly redactor: Redactor;
  readonly done: Promise<void>;
  /** Settles when the run let go of the workdir: `proved` says whether its guard went with the lease. */
  readonly released: Promise<{ proved: boolean }>;
  private markReleased!: (r: { proved: boolean }) => void;
  private readonly aborter = new AbortController();
  private abortReason: AbortReason | null = null;
  private readonly processes: RunProcesses;
  /** Settles once the stop an abort started has an answer (proved or not). */
  private readonly abortStopped: Promise<void>;
  private markAbortStopped!: () => void;
  private waiter: Waiter | null = null;
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private providerCancelled = false;
  /** The adapter asked for a provider process (whether or not one started). */
  private spawnRequested = false;
  private releasedOnce = false;

  /** Registers the run as active in this process and starts it on the next tick. */
  static start(
    core: ServiceCore,
    broker: RunBroker,
    plan: RunPlan,
    adapter: RuntimeAdapter,
    afterRelease: () => void,
  ): TaskRun {
    return new TaskRun(core, broker, plan, adapter, afterRelease);
  }

  private constructor(
    private readonly core: ServiceCore,
    private readonly broker: RunBroker,
    private readonly plan: RunPlan,
    adapter: RuntimeAdapter,
    /** Called after the run released everything (retention GC; its problems never fail a task). */
    private readonly afterRelease: () => void,
  ) {
    this.taskId = plan.taskId;
    this.redactor = core.redactorFor(plan.root);
    this.released = new Promise((resolve) => (this.markReleased = resolve));
    this.abortStopped = new Promise((resolve) => (this.markAbortStopped = resolve));
    this.processes = new RunProcesses(core.stopGraceMs, (ev) => this.noteNotProved(ev));
    core.active.set(this.taskId, this);
    // After the current turn, so the submit's answer goes out first; setImmediate, not a 0 ms
    // timer, which Bun rounds up to 1 ms on every task's path.
    this.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.run(adapter));
  }

  get signal(): AbortSignal {
    return this.aborter.signal;
  }

  addTimer(fn: () => void, ms: number): void {
    this.timers.push(setTimeout(fn, ms));
  }

  /** The waiter the adapter awaits for one pending request; a rejection is never left unhandled. */
  openWaiter(requestId: string): Promise<unknown> {
    const waiter = new Promise<unknown>((resolve, reject) => {
      this.waiter = { requestId, resolve, reject };
    });
    waiter.catch(() => {});
    return waiter;
  }

  resolveWaiter(requestId: string, value: unknown): void {
    const w = this.waiter;
    if (w?.requestId !== requestId) return;
    this.waiter = null;
    w.resolve(value);
  }

  rejectWaiter(requestId: string | null, err: ServerfsError): void {
    const w = this.waiter;
    if (!w || (requestId !== null && w.requestId !== requestId)) return;
    this.waiter = null;
    w.reject(err);
  }

  private async run(adapter: RuntimeAdapter): Promise<void> {
    const { core } = this;
    let outcome: Outcome = { kind: "abandoned" };
    try {
      if (!this.signal.aborted && !isTerminal(core.store.require(this.taskId).status)) {
        // Both steps and their event in one commit: nothing can read between them (no await),
        // and a crash before it leaves the task queued, which a restart interrupts the same way.
        // provider_started rides with them: it must be on disk before the adapter may spawn, and
        // the adapter is called next. Recovery treats it as "may have started" and sweeps the run
        // marker (finding nothing if no spawn came); whether a spawn was really asked for is
        // this run's own spawnRequested.
        core.store.together(() => {
          core.store.transition(this.taskId, "starting", {}, ["queued"]);
          this.providerEvent("task.started", { runtime: this.plan.runtime });
          core.store.transition(this.taskId, "running", { provider_started: 1 }, ["starting"]);
        });
        core.watchers.notify(this.taskId);
        const deadline = core.store.require(this.taskId).deadline_at;
        if (deadline) {
          const ms = Math.max(0, Date.parse(deadline) - Date.now());
          this.addTimer(() => this.abort("timeout"), Math.min(ms, 2_147_483_647));
        }
        const ctx = this.context();
        const call = this.plan.continueSessionId && adapter.continue ? adapter.continue(ctx) : adapter.run(ctx);
        outcome = await this.awaitProvider(call);
      }
    } catch (err) {
      outcome = { kind: "error", error: err };
    }
    // The provider tree is stopped (and the stop proved) before a success or failure is
    // published, so a terminal task never has live provider processes behind it.
    const proved = await this.stopContainment(outcome.kind === "ok");
    try {
      if (outcome.kind === "error") throw outcome.error;
      if (outcome.kind === "ok") {
        const result = outcome.value;
        this.recordIds(result.nativeSessionId ?? null, result.nativeTurnId ?? null);
        if (typeof result.finalResponse !== "string") {
          throw new ServerfsError("AGENT_PROVIDER_ERROR", "provider returned no text result");
        }
        if (this.abortReason === null && !isTerminal(core.store.require(this.taskId).status)) this.finalize(result);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.release(proved);
    }
  }

  private awaitProvider(call: Promise<AdapterResult>): Promise<Outcome> {
    return new Promise((resolve) => {
      let done = false;
      let timer: ReturnType<typeof setTimeout> | null = null;
      const onAbort = () => {
        // After an abort the outcome is already persisted; what the workdir waits for is the proof
        // that the tree is gone, not the adapter's own wind-down (an ACP agent may take seconds to
        // answer its prompt after session/cancel). Once the abort's stop has its answer the run
        // moves on; the adapter can start nothing more (spawn refuses after abort). Only for a
        // provider that lives in processes we spawned: one that never spawned proves its stop by
        // returning. An adapter that ignores cancellation is bounded either way.
        void this.abortStopped.then(() => {
          if (this.processes.count > 0) settle({ kind: "abandoned" });
        });
        timer = setTimeout(() => settle({ kind: "abandoned" }), PROVIDER_CANCEL_BOUND_MS + this.core.stopGraceMs);
      };
      const settle = (v: Outcome) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        this.signal.removeEventListener("abort", onAbort);
        resolve(v);
      };
      call.then(
        (value) => settle({ kind: "ok", value }),
        (error) => settle({ kind: "error", error }),
      );
      if (this.signal.aborted) onAbort();
      else this.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private fail(err: unknown): void {
    const { core } = this;
    const task = core.store.get(this.taskId);
    if (!task || isTerminal(task.status)) return;
    const e = toServerfsError(err, "AGENT_PROVIDER_ERROR", "the provider failed");
    const code = e.code === "INTERNAL_ERROR" ? "AGENT_PROVIDER_ERROR" : e.code;
    const to: TaskStatus = isWaiting(task.status) ? "interrupted" : "failed";
    try {
      core.note(this.taskId, to === "failed" ? "task.failed" : "task.interrupted", { error_code: code });
      core.store.transition(this.taskId, to, { error_code: code, error_message: this.redactor.text(e.message).slice(0, 2048) });
    } catch (inner) {
      core.log("task.fail_write_failed", { task_id: this.taskId, code: toServerfsError(inner).code });
    }
    core.watchers.notify(this.taskId);
  }

  /** Redact first, then inline or spool; over the spool cap the task fails. */
  private finalize(result: AdapterResult): void {
    const { core } = this;
    const { limits } = core;
    const text = this.redactor.text(result.finalResponse);
    const bytes = Buffer.from(text, "utf8");
    const sha = sha256Hex(bytes);
    if (bytes.byteLength > limits.max_spooled_result_bytes) {
      throw new ServerfsError("AGENT_RESULT_TOO_LARGE", `result exceeds ${limits.max_spooled_result_bytes} bytes`);
    }
    if (bytes.byteLength <= limits.max_final_response_bytes) {
      core.note(this.taskId, "task.completed", { result_storage: "inline", result_size_bytes: bytes.byteLength });
      core.store.transition(this.taskId, "succeeded", {
        final_response: text,
        result_storage: "inline",
        result_size_bytes: bytes.byteLength,
        result_sha256: sha,
      });
    } else {
      writeSpool(core.deps.paths.spoolDir, this.taskId, bytes);
      core.note(this.taskId, "task.result_spooled", { size_bytes: bytes.byteLength, sha256: sha });
      core.note(this.taskId, "task.completed", { result_storage: "spool", result_size_bytes: bytes.byteLength });
      core.store.transition(this.taskId, "succeeded", {
        final_response: utf8Prefix(text, limits.result_preview_bytes),
        result_storage: "spool",
        result_size_bytes: bytes.byteLength,
        result_sha256: sha,
      });
    }
    core.watchers.notify(this.taskId);
  }

  /** Stop every process of the task's containment set; true only when every stop is proved. */
  private async stopContainment(providerReturned: boolean): Promise<boolean> {
    const { core } = this;
    for (const t of this.timers) clearTimeout(t);
    this.rejectWaiter(null, new ServerfsError("REQUEST_STALE", "the task ended"));
    let proved = await this.processes.stopAll();
    // An adapter that started no process of its own (e.g. a shared daemon) proves stop only by returning.
    if (this.processes.count === 0 && !providerReturned && this.spawnRequested) proved = false;
    return proved;
  }

  private noteNotProved(ev: StopEvidence): void {
    const { core } = this;
    core.log("provider.stop_not_proved", { task_id: this.taskId, survivors: ev.survivors.length });
    // The operator needs the pids to finish the job by hand before clearing the guard.
    core.note(this.taskId, "runtime.stop_proof", {
      provider_started: true,
      method: ev.method,
      proved: false,
      survivors: ev.survivors.length,
      survivor_pids: ev.survivors.map((s) => s.pid),
    });
  }

  /** Every outcome: clear the guard only with proof, always release the lease. Synchronous on purpose. */
  private release(proved: boolean): void {
    const { core } = this;
    this.releasedOnce = true;
    if (!this.signal.aborted) this.aborter.abort();
    if (this.plan.guardFile) {
      if (proved) {
        try {
          removeGuard(this.plan.guardFile, this.taskId);
        } catch (err) {
          core.log("guard.remove_failed", { task_id: this.taskId, code: toServerfsError(err).code });
        }
      } else {
        core.log("guard.kept", { task_id: this.taskId });
      }
      core.deps.leases.release(this.plan.alias);
    }
    core.active.delete(this.taskId);
    core.events.flush();
    // Its count is in its row now; cached, every finished task stayed in the map until retention.
    core.events.forget(this.taskId);
    core.watchers.notify(this.taskId);
    this.markReleased({ proved });
    try {
      this.afterRelease();
    } catch {
      // GC problems never fail a task
    }
  }

  /** Terminal-first abort: persist the terminal state, wake waiters, then stop the provider. */
  abort(reason: AbortReason): void {
    const { core } = this;
    if (this.abortReason !== null) return;
    const task = core.store.get(this.taskId);
    if (!task) return;
    this.abortReason = reason;
    if (!isTerminal(task.status)) {
      const t = TERMINAL_FOR_REASON[reason];
      try {
        if (reason === "interaction_timeout" && task.pending_request_id) {
          core.note(this.taskId, "interaction.expired", {
            request_id: task.pending_request_id,
            kind: task.status === "waiting_for_approval" ? "approval" : "question",
          });
        }
        if (reason === "cancel") core.note(this.taskId, "task.cancelled", {});
        else core.note(this.taskId, "task.interrupted", t.code ? { error_code: t.code } : {});
        core.store.transition(this.taskId, t.status, t.code ? { error_code: t.code, error_message: MESSAGE_FOR_CODE[t.code] ?? t.code } : {});
      } catch (err) {
        core.log("task.abort_write_failed", { task_id: this.taskId, code: toServerfsError(err).code });
      }
    }
    this.rejectWaiter(null, new ServerfsError(reason === "interaction_timeout" ? "AGENT_INTERACTION_TIMED_OUT" : "REQUEST_STALE", "the task ended"));
    core.watchers.notify(this.taskId);
    this.aborter.abort();
    if (!this.providerCancelled) {
      this.providerCancelled = true;
      const adapter = core.deps.adapters.get(this.plan.runtime);
      const polite = adapter ? bounded(adapter.cancel(this.taskId), PROVIDER_CANCEL_BOUND_MS) : Promise.resolve(undefined);
      // Then the containment set is stopped (TERM, grace, KILL) whether or not the provider listened;
      // the run releases the lease (and the guard, with proof) as soon as this stop has its answer.
      void polite
        .then(() => this.processes.stopAll())
        .catch(() => false)
        .finally(() => this.markAbortStopped());
    }
  }

  private context(): TaskContext {
    const { core, plan } = this;
    return {
      taskId: plan.taskId,
      runId: plan.runId,
      workdir: plan.alias,
      workdirRoot: plan.root,
      cwd: plan.cwd,
      relativeCwd: plan.relativeCwd,
      profile: plan.profile,
      prompt: plan.prompt,
      requestedModel: plan.requestedModel,
      continueNativeSessionId: plan.continueSessionId,
      signal: this.signal,
      spawn: async (spec) => {
        if (this.signal.aborted) throw new ServerfsError("AGENT_PROVIDER_ERROR", "task is no longer active");
        // provider_started is already on disk (the running commit).
        this.spawnRequested = true;
        const env = { ...core.deps.providerEnv, ...(spec.env ?? {}), SERVERFS_RUN_ID: plan.runId };
        const pending = core.deps.containment.spawn({
          argv: spec.argv,
          cwd: spec.cwd ?? plan.cwd,
          env,
          runId: plan.runId,
          ...(spec.stderrLimitBytes !== undefined ? { stderrLimitBytes: spec.stderrLimitBytes } : {}),
        });
        return this.processes.track(pending, () => this.signal.aborted);
      },
      emitEvent: (type, payload) => this.providerEvent(type, payload),
      lastEvent: () => {
        const last = core.events.last(plan.taskId);
        return last === null ? null : { type: last.event_type, at: last.created_at };
      },
      requestApproval: (req) => this.broker.openApproval(this, req),
      askQuestion: (req) => this.broker.openQuestion(this, req),
      abandonInteraction: () => this.broker.abandon(this),
      recordNativeIds: (s, t) => this.recordIds(s, t),
      saveCapabilities: (fp, snap) => core.store.putCapabilities(plan.runtime, fp, snap),
    };
  }

  private recordIds(sessionId: string | null, turnId: string | null): void {
    const { core } = this;
    const cur = core.store.get(this.taskId);
    if (!cur) return;
    const s = sessionId ?? cur.native_session_id;
    const t = turnId ?? cur.native_turn_id;
    if (s === cur.native_session_id && t === cur.native_turn_id) return;
    // The row first, durably, before the adapter goes on (a continuation after a crash needs it).
    core.store.update(this.taskId, { native_session_id: s, native_turn_id: t });
    // The guard's copy of the ids only informs the operator; its presence, which is what blocks
    // writers, does not change. So it is rewritten (two fsyncs) after the current turn, once what
    // the adapter sends next (the prompt) is on its way, and never after the guard is gone: the
    // update refuses a guard that is not this task's.
    const guardFile = this.plan.guardFile;
    if (guardFile) {
      setImmediate(() => {
        // Released: the guard went with the proof (or stays as the record of an unproved stop).
        if (this.releasedOnce) return;
        try {
          updateGuard(guardFile, this.taskId, { native_session_id: s, native_turn_id: t });
        } catch (err) {
          core.log("guard.update_skipped", { task_id: this.taskId, code: toServerfsError(err).code });
        }
      });
    }
  }

  /** Adapter-emitted and lifecycle events: redacted and bounded; a failure surfaces to the caller. */
  private providerEvent(type: TaskEventType, payload: Record<string, unknown>): void {
    const { limits } = this.core;
    if (!isEventName(type)) throw new ServerfsError("AGENT_PROVIDER_ERROR", "invalid event type");
    let clean = this.redactor.payload(payload);
    let json = JSON.stringify(clean);
    if (utf8Bytes(json) > limits.max_event_bytes) {
      if (type === "agent.message" && typeof clean.text === "string") {
        clean = truncatedMessage(clean, limits.max_event_bytes);
        json = JSON.stringify(clean);
      } else {
        throw new ServerfsError("AGENT_EVENT_TOO_LARGE", `event payload exceeds ${limits.max_event_bytes} bytes`);
      }
    }
    this.core.events.append(this.taskId, type, json);
  }
}

/** An oversized agent.message keeps a halving prefix of its text plus the full size and hash. */
function truncatedMessage(p: Record<string, unknown>, maxBytes: number): Record<string, unknown> {
  const full = p.text as string;
  const size = utf8Bytes(full);
  const sha = sha256Hex(full);
  let budget = Math.floor(maxBytes / 2);
  for (;;) {
    const out = { ...p, text: utf8Prefix(full, budget), truncated: true, size_bytes: size, sha256: sha };
    if (utf8Bytes(JSON.stringify(out)) <= maxBytes || budget === 0) return out;
    budget = Math.floor(budget / 2);
  }
}
