// The Bridge service: owns every task from submit to terminal state (agent-reference §3-7).
// State lives in sqlite; this object holds only what cannot outlive the process: runners, timers,
// interaction waiters, the held leases. Terminal-first everywhere: a task's terminal status is
// persisted before its provider is stopped, and a lease or recovery guard is released only after
// the provider's stop has been proved by the platform (or the provider never started).
import fs from "node:fs";
import os from "node:os";
import { ServerfsError, toServerfsError } from "../errors.ts";
import type { Registry, TaskProfile } from "../config/types.ts";
import type { ContainedProcess, Containment } from "../../platform/types.ts";
import type {
  AdapterResult,
  ApprovalRequest,
  ApprovalResolution,
  QuestionRequest,
  QuestionResolution,
  RuntimeAdapter,
  RuntimeInfo,
  TaskContext,
} from "../runtimes/types.ts";
import { VERSION } from "../version.ts";
import { utf8Bytes, utf8Prefix } from "../common/utf8.ts";
import { newId, sha256Hex } from "./ids.ts";
import { leaseFiles, type BridgePaths } from "./deployment.ts";
import { listGuards, publishGuard, readGuard, removeGuard, updateGuard } from "./guard.ts";
import { normalizeApproval, normalizeQuestion, validateAnswers, validateApprovalAnswer } from "./interactions.ts";
import { LeaseManager } from "./lease.ts";
import { taskRunId, type OutsideRunJournal } from "./outside-runs.ts";
import { isTerminal, isWaiting, type TaskStatus } from "./lifecycle.ts";
import { bridgeLimits, PROVIDER_CANCEL_BOUND_MS, type BridgeLimits } from "./limits.ts";
import { bridgeHostRoots, type HostRoot } from "./host-roots.ts";
import { Redactor } from "./redact.ts";
import { deleteSpool, readSpoolChunk, writeSpool } from "./spool.ts";
import { EventLog } from "./store/events.ts";
import { nowIso, TaskStore, type InteractionRow, type TaskRow } from "./store/tasks.ts";
import {
  authorize,
  buildManifest,
  normalizeRelativePath,
  requestFingerprint,
  validateIdentifiers,
  type SubmitParams,
} from "./submit.ts";
import { TaskWatchers } from "./watchers.ts";

export type LogFn = (event: string, fields?: Record<string, unknown>) => void;

export interface ServiceDeps {
  registry: Registry;
  paths: BridgePaths;
  store: TaskStore;
  leases: LeaseManager;
  containment: Containment;
  adapters: Map<string, RuntimeAdapter>;
  /** Base environment for provider children (already scrubbed). */
  providerEnv: Record<string, string>;
  /** Literal secrets (provider env file values) redacted from everything a caller can read. */
  secrets?: string[];
  log?: LogFn;
  limits?: Partial<BridgeLimits>;
  /** Grace between TERM and KILL when stopping a provider tree. */
  stopGraceMs?: number;
  /** Run ids started outside any task (probes); leftovers of earlier instances are swept at start. */
  outsideRuns?: OutsideRunJournal;
}

type AbortReason = "cancel" | "timeout" | "interaction_timeout" | "shutdown";

interface Waiter {
  requestId: string;
  resolve: (value: unknown) => void;
  reject: (err: ServerfsError) => void;
}

interface ActiveRun {
  taskId: string;
  alias: string;
  runtime: string;
  workspaceWrite: boolean;
  guardFile: string | null;
  prompt: string;
  root: string;
  cwd: string;
  relativeCwd: string;
  profile: TaskProfile;
  requestedModel: string | null;
  continueSessionId: string | null;
  runId: string;
  redactor: Redactor;
  abort: AbortController;
  abortReason: AbortReason | null;
  processes: ContainedProcess[];
  waiter: Waiter | null;
  timers: ReturnType<typeof setTimeout>[];
  providerCancelled: boolean;
  done: Promise<void>;
}

const TERMINAL_FOR_REASON: Record<AbortReason, { status: TaskStatus; code: string | null }> = {
  cancel: { status: "cancelled", code: null },
  timeout: { status: "interrupted", code: "AGENT_TASK_TIMED_OUT" },
  interaction_timeout: { status: "interrupted", code: "AGENT_INTERACTION_TIMED_OUT" },
  shutdown: { status: "interrupted", code: "BRIDGE_SHUTDOWN" },
};

function str(params: Record<string, unknown>, key: string): string | null {
  const v = params[key];
  return typeof v === "string" ? v : null;
}

function int(params: Record<string, unknown>, key: string, fallback: number): number {
  const v = params[key];
  return typeof v === "number" ? v : fallback;
}

function bounded<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(undefined), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      () => {
        clearTimeout(t);
        resolve(undefined);
      },
    );
  });
}

export class BridgeService {
  readonly limits: BridgeLimits;
  readonly events: EventLog;
  readonly watchers = new TaskWatchers();
  private readonly active = new Map<string, ActiveRun>();
  private closed = false;
  private started = false;
  private submitChain: Promise<unknown> = Promise.resolve();
  private readonly log: LogFn;
  private readonly stopGraceMs: number;
  /** Home, state, temp and provider config directories redacted alongside each task's workdir. */
  private readonly hostRoots: HostRoot[];
  /** For caller-visible output outside any task (runtime probes, model catalogs): no workdir. */
  private readonly hostRedactor: Redactor;
  readonly startedAt = nowIso();

  constructor(private readonly deps: ServiceDeps) {
    this.limits = bridgeLimits(deps.registry.agent, deps.limits);
    this.log = deps.log ?? (() => {});
    this.stopGraceMs = deps.stopGraceMs ?? 2000;
    this.hostRoots = bridgeHostRoots({ paths: deps.paths, envs: [process.env, deps.providerEnv], homedir: os.homedir(), tmpdir: os.tmpdir() });
    this.hostRedactor = new Redactor("", deps.secrets ?? [], this.hostRoots);
    this.events = new EventLog(deps.store.db, this.limits.max_events_per_task);
    deps.store.beforeStatusWrite = () => this.events.flush();
  }

  get store(): TaskStore {
    return this.deps.store;
  }

  activeCount(): number {
    return this.active.size;
  }

  // ---------------------------------------------------------------------------------------------
  // Start: retention GC, then restart reconciliation (§4.4). A task is never re-run.

  async start(): Promise<number> {
    this.gc();
    let reconciled = 0;
    const handled = new Set<string>();
    for (const task of this.store.nonTerminal()) {
      handled.add(task.task_id);
      reconciled++;
      const adapter = this.deps.adapters.get(task.runtime);
      this.tryEvent(task.task_id, "runtime.reconcile_started", { runtime: task.runtime });
      let providerActive: boolean | null = null;
      let status = "UNKNOWN";
      try {
        if (adapter?.reconcile) {
          const r = await adapter.reconcile({
            taskId: task.task_id,
            runId: task.run_id,
            status: task.status,
            nativeSessionId: task.native_session_id,
            nativeTurnId: task.native_turn_id,
            providerStarted: task.provider_started === 1,
          });
          status = r.status;
          providerActive = r.providerActive;
        }
      } catch {
        providerActive = null;
      }
      if (providerActive !== true) providerActive = await this.provedInactive(task);
      this.tryEvent(task.task_id, "runtime.reconcile_finished", {
        runtime: task.runtime,
        status,
        provider_active: providerActive,
      });
      const pastDeadline = task.deadline_at !== null && task.deadline_at <= nowIso();
      const code = pastDeadline ? "AGENT_TASK_TIMED_OUT" : "BRIDGE_RESTARTED";
      try {
        this.store.transition(task.task_id, "interrupted", {
          error_code: code,
          error_message: pastDeadline ? "task deadline passed while the Bridge was down" : "the Bridge restarted while the task was active",
        });
      } catch (err) {
        this.log("reconcile.transition_failed", { task_id: task.task_id, code: toServerfsError(err).code });
      }
      this.tryEvent(task.task_id, "task.reconciled", { status: "interrupted", provider_active: providerActive, error_code: code });
      if (task.profile === "workspace-write" && providerActive === false) {
        this.removeGuardFor(task.workdir_alias, task.task_id);
      }
    }
    // Guards left behind by tasks that were already terminal (crash between terminal write and removal).
    for (const guardFile of listGuards(this.deps.paths.guardDir)) {
      try {
        const g = readGuard(guardFile);
        if (g.state !== "present" || handled.has(g.record.task_id)) continue;
        const task = this.store.get(g.record.task_id);
        if (!task || !isTerminal(task.status)) continue;
        if ((await this.provedInactive(task)) === false) removeGuard(guardFile, task.task_id);
      } catch {
        // the guard stays: fail closed
      }
    }
    await this.sweepOutsideRuns();
    this.events.flush();
    this.started = true;
    return reconciled;
  }

  /**
   * Processes an earlier Bridge started outside any task (runtime probes, model discovery) and did
   * not prove stopped — typically because it crashed: sweep their exact run markers; a record is
   * removed only with proof, otherwise it stays for the next start. Never fails the start.
   */
  private async sweepOutsideRuns(): Promise<void> {
    const journal = this.deps.outsideRuns;
    if (!journal) return;
    const leftovers = journal.leftovers();
    if (leftovers.length === 0) return;
    try {
      const r = await this.deps.containment.sweep(
        leftovers.map((l) => l.runId),
        this.stopGraceMs,
      );
      this.log("reconcile.outside_sweep", {
        run_ids: leftovers.length,
        found: r.found,
        method: r.evidence.method,
        proved: r.evidence.proved,
        survivor_pids: r.evidence.survivors.map((s) => s.pid),
      });
      if (r.evidence.proved) journal.remove(leftovers);
    } catch (err) {
      this.log("reconcile.outside_sweep_failed", { run_ids: leftovers.length, code: toServerfsError(err).code });
    }
  }

  /**
   * false when the task's provider is proved gone (never started, or its run marker swept with
   * proof); else null (unknown). The proof is recorded as a `runtime.stop_proof` event.
   */
  private async provedInactive(task: TaskRow): Promise<false | null> {
    if (task.provider_started !== 1) {
      this.tryEvent(task.task_id, "runtime.stop_proof", { provider_started: false, proved: true });
      return false;
    }
    if (!task.run_id) return null;
    try {
      const r = await this.deps.containment.sweep([task.run_id], this.stopGraceMs);
      this.log("reconcile.sweep", { task_id: task.task_id, found: r.found, proved: r.evidence.proved });
      this.tryEvent(task.task_id, "runtime.stop_proof", {
        provider_started: true,
        swept: r.found,
        method: r.evidence.method,
        survivors: r.evidence.survivors.length,
        proved: r.evidence.proved,
      });
      return r.evidence.proved ? false : null;
    } catch {
      this.tryEvent(task.task_id, "runtime.stop_proof", { provider_started: true, proved: false });
      return null;
    }
  }

  private removeGuardFor(alias: string, taskId: string): void {
    try {
      const { guardFile } = leaseFiles(this.deps.registry, alias);
      removeGuard(guardFile, taskId);
    } catch (err) {
      this.log("guard.remove_failed", { task_id: taskId, code: toServerfsError(err).code });
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Close: running tasks become interrupted/BRIDGE_SHUTDOWN and their provider trees are stopped.

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const runs = [...this.active.values()];
    for (const run of runs) this.abortRun(run, "shutdown");
    await bounded(Promise.all(runs.map((r) => r.done)), PROVIDER_CANCEL_BOUND_MS + this.stopGraceMs + 5000);
    this.watchers.wakeAll();
    this.deps.leases.releaseAll();
    this.events.close();
  }

  isClosed(): boolean {
    return this.closed;
  }

  // ---------------------------------------------------------------------------------------------
  // RPC dispatch

  async dispatch(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.closed) throw new ServerfsError("BRIDGE_CLOSED", "the Bridge is shutting down");
    switch (method) {
      case "runtime.list":
        return { runtimes: await this.listRuntimes() };
      case "runtime.models":
        return this.runtimeModels(params);
      case "task.submit":
        return this.submit({
          runtime: params.runtime as string,
          workdir: params.workdir as string,
          path: params.path as string,
          profile: params.profile as string,
          prompt: params.prompt as string,
          model: str(params, "model"),
          continue_from_task_id: str(params, "continue_from_task_id"),
          correlation_id: str(params, "correlation_id"),
          idempotency_key: str(params, "idempotency_key"),
        });
      case "task.get":
        return this.getTask(params.task_id as string, int(params, "wait_seconds", 0));
      case "task.events":
        return this.readEvents(params.task_id as string, int(params, "after_event_id", 0), int(params, "limit", 100));
      case "task.result.read":
        return this.readResult(params.task_id as string, int(params, "offset_bytes", 0), int(params, "max_bytes", 65_536));
      case "task.approval.respond":
        return this.respondApproval(params);
      case "task.question.answer":
        return this.answerQuestion(params.task_id as string, params.request_id as string, params.answers, decidedBy(params));
      case "task.message.send":
        return this.sendMessage(params.task_id as string, params.message as string);
      case "task.cancel":
        return this.cancel(params.task_id as string);
      case "task.list":
        return this.listTasks(int(params, "limit", 50), str(params, "status"));
      case "bridge.status":
        return {
          version: VERSION,
          pid: process.pid,
          started_at: this.startedAt,
          active_tasks: this.store.countActive(),
          running_in_process: this.active.size,
          rss_bytes: process.memoryUsage().rss,
        };
      default:
        throw new ServerfsError("METHOD_NOT_FOUND", `unknown method '${method.slice(0, 64)}'`);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Runtimes

  async listRuntimes(): Promise<RuntimeInfo[]> {
    const out: RuntimeInfo[] = [];
    for (const [name, adapter] of this.deps.adapters) {
      try {
        out.push(this.hostRedactor.payload(await adapter.probe()) as RuntimeInfo);
      } catch {
        out.push({ name, available: false } as RuntimeInfo);
      }
    }
    return out;
  }

  private async runtimeModels(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const runtime = params.runtime as string;
    const adapter = this.deps.adapters.get(runtime);
    if (!adapter) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `runtime '${runtime.slice(0, 64)}' is not available`);
    const advice =
      (params.workdir !== undefined && params.workdir !== null) ||
      (params.task_prompt !== undefined && params.task_prompt !== null) ||
      (params.path !== undefined && params.path !== "") ||
      (params.profile !== undefined && params.profile !== "workspace-write");
    if (advice) {
      if (typeof params.workdir !== "string" || typeof params.task_prompt !== "string") {
        throw new ServerfsError("INVALID_REQUEST", "advice mode needs both workdir and task_prompt");
      }
      const profile = (params.profile as string | undefined) ?? "workspace-write";
      if (profile !== "review" && profile !== "workspace-write") throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", "unknown profile");
      if (utf8Bytes(params.task_prompt) > this.limits.max_prompt_bytes) throw new ServerfsError("AGENT_PROMPT_TOO_LARGE", "task_prompt is too large");
      authorize(this.deps.registry, runtime, params.workdir, profile, normalizeRelativePath((params.path as string | undefined) ?? ""));
    }
    let result: Record<string, unknown>;
    if (!adapter.listModels) {
      result = { runtime, status: "unsupported", scope: "none", source: runtime, models: [] };
    } else {
      try {
        result = await adapter.listModels();
      } catch (err) {
        result = { runtime, status: "unavailable", scope: "none", source: runtime, models: [], detail: toServerfsError(err).code };
      }
    }
    result = this.hostRedactor.payload(result);
    if (advice) result.model_advice = { status: "disabled", automatic: false };
    return result;
  }

  // ---------------------------------------------------------------------------------------------
  // Submit (§3.2), serialized so idempotency, lease and the active-task cap are decided atomically.

  submit(p: SubmitParams): Promise<Record<string, unknown>> {
    const run = this.submitChain.then(() => this.submitLocked(p));
    this.submitChain = run.catch(() => {});
    return run;
  }

  private async submitLocked(p: SubmitParams): Promise<Record<string, unknown>> {
    if (this.closed) throw new ServerfsError("BRIDGE_CLOSED", "the Bridge is shutting down");
    validateIdentifiers(p);
    this.gc();
    if (utf8Bytes(p.prompt) > this.limits.max_prompt_bytes) {
      throw new ServerfsError("AGENT_PROMPT_TOO_LARGE", `prompt exceeds ${this.limits.max_prompt_bytes} bytes`);
    }
    if (p.profile !== "review" && p.profile !== "workspace-write") {
      throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `unknown profile '${p.profile.slice(0, 64)}'`);
    }
    const profile = p.profile as TaskProfile;
    const rel = normalizeRelativePath(p.path);
    const fingerprint = requestFingerprint(p, rel);
    const replay = this.idempotentReplay(p, fingerprint);
    if (replay) return replay;
    const auth = authorize(this.deps.registry, p.runtime, p.workdir, profile, rel);
    let continueSession: string | null = null;
    if (p.continue_from_task_id !== null) {
      const prior = this.store.get(p.continue_from_task_id);
      if (!prior) throw new ServerfsError("AGENT_TASK_NOT_FOUND", "continue_from_task_id does not name a task");
      if (prior.runtime !== p.runtime || prior.workdir_alias !== p.workdir) {
        throw new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "a continuation must use the same runtime and workdir");
      }
      if (prior.profile === "review" && profile === "workspace-write") {
        throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", "a continuation cannot escalate review to workspace-write");
      }
      if (!isTerminal(prior.status) || !prior.native_session_id) {
        throw new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "the prior task is not finished or has no resumable session");
      }
      continueSession = prior.native_session_id;
    }
    const adapter = this.deps.adapters.get(p.runtime);
    if (!adapter) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `runtime '${p.runtime.slice(0, 64)}' is not available`);
    let info: RuntimeInfo;
    try {
      info = await adapter.probe();
    } catch {
      throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `runtime '${p.runtime}' could not be probed`);
    }
    const deadlineAt = new Date(Date.now() + this.limits.task_timeout_seconds * 1000).toISOString();
    const manifest = buildManifest({
      params: p,
      relativeCwd: rel,
      workdir: auth.workdir,
      runtimeVersion: info.version === null || info.version === undefined ? null : this.hostRedactor.text(info.version),
      inFlightRecovery: info.in_flight_recovery ?? "none",
      limits: this.limits,
      deadlineAt,
    });
    // Re-check after the awaits above (another submit may have committed the key meanwhile).
    const again = this.idempotentReplay(p, fingerprint);
    if (again) return again;

    const workspaceWrite = profile === "workspace-write";
    const files = leaseFiles(this.deps.registry, p.workdir);
    if (workspaceWrite) {
      if (!this.deps.leases.isHeld(p.workdir)) await this.lazyReconcile(p.workdir, files.guardFile);
      this.deps.leases.acquire(p.workdir);
    }
    const taskId = newId("agt_");
    const runId = taskRunId(taskId);
    let inserted = false;
    try {
      const now = nowIso();
      this.store.insert(
        {
          task_id: taskId,
          runtime: p.runtime,
          workdir_alias: p.workdir,
          relative_cwd: rel,
          profile,
          created_at: now,
          updated_at: now,
          deadline_at: deadlineAt,
          continue_from_task_id: p.continue_from_task_id,
          correlation_id: p.correlation_id,
          idempotency_key: p.idempotency_key,
          requested_model: p.model,
          request_fingerprint: fingerprint,
          manifest_json: manifest.json,
          manifest_sha256: manifest.sha256,
          run_id: runId,
          native_session_id: continueSession,
        },
        this.limits.max_active_tasks,
      );
      inserted = true;
      if (workspaceWrite) {
        publishGuard(files.guardFile, {
          key: `alias:${p.workdir}`,
          task_id: taskId,
          run_id: runId,
          runtime: p.runtime,
          workdir_alias: p.workdir,
          correlation_id: p.correlation_id,
          native_session_id: continueSession,
          native_turn_id: null,
        });
      }
      const run: ActiveRun = {
        taskId,
        alias: p.workdir,
        runtime: p.runtime,
        workspaceWrite,
        guardFile: workspaceWrite ? files.guardFile : null,
        prompt: p.prompt,
        root: auth.root,
        cwd: auth.cwd,
        relativeCwd: rel,
        profile,
        requestedModel: p.model,
        continueSessionId: continueSession,
        runId,
        redactor: new Redactor(auth.root, this.deps.secrets ?? [], this.hostRoots),
        abort: new AbortController(),
        abortReason: null,
        processes: [],
        waiter: null,
        timers: [],
        providerCancelled: false,
        done: Promise.resolve(),
      };
      this.active.set(taskId, run);
      run.done = new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => this.runTask(run, adapter));
    } catch (err) {
      if (workspaceWrite) {
        if (inserted) removeGuard(files.guardFile, taskId);
        this.deps.leases.release(p.workdir);
      }
      if (inserted) {
        this.active.delete(taskId);
        try {
          this.store.transition(taskId, "interrupted", { error_code: "BRIDGE_SCHEDULING_FAILED", error_message: "task could not be scheduled" });
        } catch {
          // already terminal
        }
      }
      throw err;
    }
    return { task_id: taskId, status: "queued", correlation_id: p.correlation_id, idempotency_key: p.idempotency_key };
  }

  private idempotentReplay(p: SubmitParams, fingerprint: string): Record<string, unknown> | null {
    if (p.idempotency_key === null) return null;
    const hit = this.store.findIdempotent(p.idempotency_key);
    if (!hit) return null;
    if (hit.request_fingerprint !== fingerprint) {
      throw new ServerfsError("AGENT_IDEMPOTENCY_CONFLICT", "idempotency_key was already used for a different request");
    }
    const task = this.store.require(hit.task_id);
    return { task_id: task.task_id, status: task.status, correlation_id: task.correlation_id, idempotency_key: task.idempotency_key };
  }

  /** §4.3 lazy reconciliation: a guard left by a task this process does not run blocks unless proved stopped. */
  private async lazyReconcile(alias: string, guardFile: string): Promise<void> {
    const g = readGuard(guardFile);
    if (g.state === "absent") return;
    if (g.state === "unsafe") throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} has invalid recovery state`);
    const task = this.store.get(g.record.task_id);
    if (!task || this.active.has(task.task_id)) {
      throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} has orphaned recovery state`);
    }
    this.tryEvent(task.task_id, "runtime.reconcile_started", { runtime: task.runtime });
    const inactive = await this.provedInactive(task);
    this.tryEvent(task.task_id, "runtime.reconcile_finished", { runtime: task.runtime, status: "UNKNOWN", provider_active: inactive });
    if (inactive !== false) {
      throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} still has unresolved provider state`);
    }
    if (!isTerminal(task.status)) {
      this.store.transition(task.task_id, "interrupted", {
        error_code: "AGENT_PROVIDER_INACTIVE",
        error_message: "the provider was proved stopped",
      });
      this.tryEvent(task.task_id, "task.interrupted", { error_code: "AGENT_PROVIDER_INACTIVE" });
      this.watchers.notify(task.task_id);
    }
    this.tryEvent(task.task_id, "task.reconciled", { status: this.store.require(task.task_id).status, provider_active: false });
    removeGuard(guardFile, task.task_id);
  }

  // ---------------------------------------------------------------------------------------------
  // Runner (§3.3)

  private async runTask(run: ActiveRun, adapter: RuntimeAdapter): Promise<void> {
    type Outcome = { kind: "ok"; value: AdapterResult } | { kind: "error"; error: unknown } | { kind: "abandoned" };
    let outcome: Outcome = { kind: "abandoned" };
    try {
      if (!run.abort.signal.aborted && !isTerminal(this.store.require(run.taskId).status)) {
        this.store.transition(run.taskId, "starting", {}, ["queued"]);
        this.strictEvent(run, "task.started", { runtime: run.runtime });
        this.store.transition(run.taskId, "running", {}, ["starting"]);
        this.watchers.notify(run.taskId);
        const deadline = this.store.require(run.taskId).deadline_at;
        if (deadline) {
          const ms = Math.max(0, Date.parse(deadline) - Date.now());
          run.timers.push(setTimeout(() => this.abortRun(run, "timeout"), Math.min(ms, 2_147_483_647)));
        }
        const ctx = this.contextFor(run);
        const call = run.continueSessionId && adapter.continue ? adapter.continue(ctx) : adapter.run(ctx);
        outcome = await this.awaitProvider(run, call);
      }
    } catch (err) {
      outcome = { kind: "error", error: err };
    }
    // The provider tree is stopped (and the stop proved) before a success or failure is
    // published, so a terminal task never has live provider processes behind it.
    const proved = await this.stopContainment(run, outcome.kind === "ok");
    try {
      if (outcome.kind === "error") throw outcome.error;
      if (outcome.kind === "ok") {
        const result = outcome.value;
        this.recordIds(run, result.nativeSessionId ?? null, result.nativeTurnId ?? null);
        if (typeof result.finalResponse !== "string") {
          throw new ServerfsError("AGENT_PROVIDER_ERROR", "provider returned no text result");
        }
        if (run.abortReason === null && !isTerminal(this.store.require(run.taskId).status)) this.finalize(run, result);
      }
    } catch (err) {
      this.failRun(run, err);
    } finally {
      this.releaseRun(run, proved);
    }
  }

  private awaitProvider(
    run: ActiveRun,
    call: Promise<AdapterResult>,
  ): Promise<{ kind: "ok"; value: AdapterResult } | { kind: "error"; error: unknown } | { kind: "abandoned" }> {
    return new Promise((resolve) => {
      let done = false;
      let timer: ReturnType<typeof setTimeout> | null = null;
      const onAbort = () => {
        // An adapter that ignores cancellation must not hold the task: after abort, wait a bounded time.
        timer = setTimeout(() => settle({ kind: "abandoned" }), PROVIDER_CANCEL_BOUND_MS + this.stopGraceMs);
      };
      const settle = (v: { kind: "ok"; value: AdapterResult } | { kind: "error"; error: unknown } | { kind: "abandoned" }) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        run.abort.signal.removeEventListener("abort", onAbort);
        resolve(v);
      };
      call.then(
        (value) => settle({ kind: "ok", value }),
        (error) => settle({ kind: "error", error }),
      );
      if (run.abort.signal.aborted) onAbort();
      else run.abort.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  private failRun(run: ActiveRun, err: unknown): void {
    const task = this.store.get(run.taskId);
    if (!task || isTerminal(task.status)) return;
    const e = toServerfsError(err, "AGENT_PROVIDER_ERROR", "the provider failed");
    const code = e.code === "INTERNAL_ERROR" ? "AGENT_PROVIDER_ERROR" : e.code;
    const to: TaskStatus = isWaiting(task.status) ? "interrupted" : "failed";
    try {
      this.tryEvent(run.taskId, to === "failed" ? "task.failed" : "task.interrupted", { error_code: code });
      this.store.transition(run.taskId, to, { error_code: code, error_message: run.redactor.text(e.message).slice(0, 2048) });
    } catch (inner) {
      this.log("task.fail_write_failed", { task_id: run.taskId, code: toServerfsError(inner).code });
    }
    this.watchers.notify(run.taskId);
  }

  /** §6: redact first, then inline or spool; over the spool cap the task fails. */
  private finalize(run: ActiveRun, result: AdapterResult): void {
    const text = run.redactor.text(result.finalResponse);
    const bytes = Buffer.from(text, "utf8");
    const sha = sha256Hex(bytes);
    if (bytes.byteLength > this.limits.max_spooled_result_bytes) {
      throw new ServerfsError("AGENT_RESULT_TOO_LARGE", `result exceeds ${this.limits.max_spooled_result_bytes} bytes`);
    }
    if (bytes.byteLength <= this.limits.max_final_response_bytes) {
      this.tryEvent(run.taskId, "task.completed", { result_storage: "inline", result_size_bytes: bytes.byteLength });
      this.store.transition(run.taskId, "succeeded", {
        final_response: text,
        result_storage: "inline",
        result_size_bytes: bytes.byteLength,
        result_sha256: sha,
      });
    } else {
      writeSpool(this.deps.paths.spoolDir, run.taskId, bytes);
      this.tryEvent(run.taskId, "task.result_spooled", { size_bytes: bytes.byteLength, sha256: sha });
      this.tryEvent(run.taskId, "task.completed", { result_storage: "spool", result_size_bytes: bytes.byteLength });
      this.store.transition(run.taskId, "succeeded", {
        final_response: utf8Prefix(text, this.limits.result_preview_bytes),
        result_storage: "spool",
        result_size_bytes: bytes.byteLength,
        result_sha256: sha,
      });
    }
    this.watchers.notify(run.taskId);
  }

  /** Stop every process of the task's containment set; true only when every stop is proved. */
  private async stopContainment(run: ActiveRun, providerReturned: boolean): Promise<boolean> {
    for (const t of run.timers) clearTimeout(t);
    if (run.waiter) {
      run.waiter.reject(new ServerfsError("REQUEST_STALE", "the task ended"));
      run.waiter = null;
    }
    let proved = true;
    for (const proc of run.processes) {
      try {
        const ev = await proc.stop(this.stopGraceMs);
        if (!ev.proved) {
          proved = false;
          this.log("provider.stop_not_proved", { task_id: run.taskId, survivors: ev.survivors.length });
          // The operator needs the pids to finish the job by hand before clearing the guard.
          this.tryEvent(run.taskId, "runtime.stop_proof", {
            provider_started: true,
            method: ev.method,
            proved: false,
            survivors: ev.survivors.length,
            survivor_pids: ev.survivors.map((s) => s.pid),
          });
        }
      } catch {
        proved = false;
      }
    }
    // An adapter that started no process of its own (e.g. a shared daemon) proves stop only by returning.
    if (run.processes.length === 0 && !providerReturned && this.store.get(run.taskId)?.provider_started === 1) proved = false;
    return proved;
  }

  /** Every outcome: clear the guard only with proof, always release the lease. Synchronous on purpose. */
  private releaseRun(run: ActiveRun, proved: boolean): void {
    if (!run.abort.signal.aborted) run.abort.abort();
    if (run.workspaceWrite && run.guardFile) {
      if (proved) {
        try {
          removeGuard(run.guardFile, run.taskId);
        } catch (err) {
          this.log("guard.remove_failed", { task_id: run.taskId, code: toServerfsError(err).code });
        }
      } else {
        this.log("guard.kept", { task_id: run.taskId });
      }
      this.deps.leases.release(run.alias);
    }
    this.active.delete(run.taskId);
    this.events.flush();
    this.watchers.notify(run.taskId);
    try {
      this.gc();
    } catch {
      // GC problems never fail a task
    }
  }

  /** Terminal-first abort: persist the terminal state, wake waiters, then stop the provider. */
  private abortRun(run: ActiveRun, reason: AbortReason): void {
    if (run.abortReason !== null) return;
    const task = this.store.get(run.taskId);
    if (!task) return;
    run.abortReason = reason;
    if (!isTerminal(task.status)) {
      const t = TERMINAL_FOR_REASON[reason];
      try {
        if (reason === "interaction_timeout" && task.pending_request_id) {
          this.tryEvent(run.taskId, "interaction.expired", {
            request_id: task.pending_request_id,
            kind: task.status === "waiting_for_approval" ? "approval" : "question",
          });
        }
        this.tryEvent(run.taskId, reason === "cancel" ? "task.cancelled" : "task.interrupted", t.code ? { error_code: t.code } : {});
        this.store.transition(run.taskId, t.status, t.code ? { error_code: t.code, error_message: messageFor(t.code) } : {});
      } catch (err) {
        this.log("task.abort_write_failed", { task_id: run.taskId, code: toServerfsError(err).code });
      }
    }
    if (run.waiter) {
      run.waiter.reject(new ServerfsError(reason === "interaction_timeout" ? "AGENT_INTERACTION_TIMED_OUT" : "REQUEST_STALE", "the task ended"));
      run.waiter = null;
    }
    this.watchers.notify(run.taskId);
    run.abort.abort();
    if (!run.providerCancelled) {
      run.providerCancelled = true;
      const adapter = this.deps.adapters.get(run.runtime);
      const polite = adapter ? bounded(adapter.cancel(run.taskId), PROVIDER_CANCEL_BOUND_MS) : Promise.resolve(undefined);
      // Then the containment set is stopped (TERM, grace, KILL) whether or not the provider listened;
      // the runner proves the stop again before releasing the lease or the guard.
      void polite.then(() => Promise.all(run.processes.map((p) => p.stop(this.stopGraceMs).catch(() => null))));
    }
  }

  private contextFor(run: ActiveRun): TaskContext {
    return {
      taskId: run.taskId,
      runId: run.runId,
      workdir: run.alias,
      workdirRoot: run.root,
      cwd: run.cwd,
      relativeCwd: run.relativeCwd,
      profile: run.profile,
      prompt: run.prompt,
      requestedModel: run.requestedModel,
      continueNativeSessionId: run.continueSessionId,
      signal: run.abort.signal,
      spawn: async (spec) => {
        if (run.abort.signal.aborted) throw new ServerfsError("AGENT_PROVIDER_ERROR", "task is no longer active");
        this.store.update(run.taskId, { provider_started: 1 });
        const env = { ...this.deps.providerEnv, ...(spec.env ?? {}), SERVERFS_RUN_ID: run.runId };
        const proc = await this.deps.containment.spawn({
          argv: spec.argv,
          cwd: spec.cwd ?? run.cwd,
          env,
          runId: run.runId,
          ...(spec.stderrLimitBytes !== undefined ? { stderrLimitBytes: spec.stderrLimitBytes } : {}),
        });
        run.processes.push(proc);
        if (run.abort.signal.aborted) void proc.stop(this.stopGraceMs);
        return proc;
      },
      emitEvent: (type, payload) => this.strictEvent(run, type, payload),
      requestApproval: (req) => this.openApproval(run, req),
      askQuestion: (req) => this.openQuestion(run, req),
      abandonInteraction: () => this.abandonInteraction(run),
      recordNativeIds: (s, t) => this.recordIds(run, s, t),
      saveCapabilities: (fp, snap) => this.store.putCapabilities(run.runtime, fp, snap),
    };
  }

  private recordIds(run: ActiveRun, sessionId: string | null, turnId: string | null): void {
    const cur = this.store.get(run.taskId);
    if (!cur) return;
    const s = sessionId ?? cur.native_session_id;
    const t = turnId ?? cur.native_turn_id;
    if (s === cur.native_session_id && t === cur.native_turn_id) return;
    this.store.update(run.taskId, { native_session_id: s, native_turn_id: t });
    if (run.workspaceWrite && run.guardFile) updateGuard(run.guardFile, run.taskId, { native_session_id: s, native_turn_id: t });
  }

  // ---------------------------------------------------------------------------------------------
  // Events (§5)

  /** Adapter-emitted and lifecycle events: bounded and redacted; a failure surfaces to the caller. */
  private strictEvent(run: ActiveRun, type: string, payload: Record<string, unknown>): void {
    if (typeof type !== "string" || !/^[a-z][a-z0-9_.]{0,63}$/.test(type)) {
      throw new ServerfsError("AGENT_PROVIDER_ERROR", "invalid event type");
    }
    let clean = run.redactor.payload(payload);
    let json = JSON.stringify(clean);
    if (utf8Bytes(json) > this.limits.max_event_bytes) {
      if (type === "agent.message" && typeof clean.text === "string") {
        clean = this.truncatedMessage(clean);
        json = JSON.stringify(clean);
      } else {
        throw new ServerfsError("AGENT_EVENT_TOO_LARGE", `event payload exceeds ${this.limits.max_event_bytes} bytes`);
      }
    }
    this.events.append(run.taskId, type, json);
  }

  private truncatedMessage(p: Record<string, unknown>): Record<string, unknown> {
    const full = p.text as string;
    const size = utf8Bytes(full);
    const sha = sha256Hex(full);
    let budget = Math.floor(this.limits.max_event_bytes / 2);
    for (;;) {
      const out = { ...p, text: utf8Prefix(full, budget), truncated: true, size_bytes: size, sha256: sha };
      if (utf8Bytes(JSON.stringify(out)) <= this.limits.max_event_bytes || budget === 0) return out;
      budget = Math.floor(budget / 2);
    }
  }

  /** Bridge bookkeeping events: best effort, never fail the caller. */
  private tryEvent(taskId: string, type: string, payload: Record<string, unknown>): void {
    try {
      const json = JSON.stringify(payload);
      if (utf8Bytes(json) <= this.limits.max_event_bytes) this.events.append(taskId, type, json);
    } catch {
      // bookkeeping only
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Interactions (§7)

  private expiresAt(taskId: string): string {
    const deadline = this.store.require(taskId).deadline_at;
    const byTimeout = Date.now() + this.limits.interaction_timeout_seconds * 1000;
    const ms = deadline ? Math.min(Date.parse(deadline), byTimeout) : byTimeout;
    return new Date(ms).toISOString();
  }

  private async openInteraction(run: ActiveRun, kind: "approval" | "question", payload: Record<string, unknown>): Promise<unknown> {
    if (run.abort.signal.aborted) throw new ServerfsError("REQUEST_STALE", "the task is no longer active");
    const clean = run.redactor.payload(payload);
    const json = JSON.stringify(clean);
    if (utf8Bytes(json) > this.limits.max_interaction_bytes) {
      throw new ServerfsError("AGENT_INTERACTION_TOO_LARGE", `interaction exceeds ${this.limits.max_interaction_bytes} bytes`);
    }
    // One pending request per task: refuse before anything (waiter, event) is created.
    const current = this.store.require(run.taskId);
    if (current.pending_request_id !== null) throw new ServerfsError("REQUEST_PENDING", "the task already has a pending request");
    if (current.status !== "running") throw new ServerfsError("INVALID_TASK_TRANSITION", `task is ${current.status}`);
    const requestId = newId("req_");
    const expiresAt = this.expiresAt(run.taskId);
    if (Date.parse(expiresAt) <= Date.now()) return this.expiredOnArrival(run, kind, requestId, json, expiresAt);
    const row: InteractionRow = {
      request_id: requestId,
      task_id: run.taskId,
      kind,
      status: "pending",
      payload_json: json,
      created_at: nowIso(),
      expires_at: expiresAt,
      resolved_at: null,
      resolution_json: null,
    };
    const waiter = new Promise<unknown>((resolve, reject) => {
      run.waiter = { requestId, resolve, reject };
    });
    waiter.catch(() => {});
    this.events.append(run.taskId, kind === "approval" ? "approval.requested" : "question.requested", JSON.stringify({ request_id: requestId, expires_at: expiresAt }));
    this.store.openInteraction(row);
    this.watchers.notify(run.taskId);
    const deadline = this.store.require(run.taskId).deadline_at;
    if (!deadline || Date.parse(expiresAt) < Date.parse(deadline)) {
      const timer = setTimeout(() => {
        const t = this.store.get(run.taskId);
        if (t && t.pending_request_id === requestId && isWaiting(t.status)) this.abortRun(run, "interaction_timeout");
      }, Math.max(0, Date.parse(expiresAt) - Date.now()));
      run.timers.push(timer);
    }
    return waiter;
  }

  /**
   * §7.4: a request that is already expired when its waiter is created fails that waiter with
   * AGENT_INTERACTION_EXPIRED. interaction_timeout_seconds is at least 1, so this happens only when
   * the task deadline has passed before its timer fired: the request is recorded stale (never
   * pending), and the task deadline handles the task (interrupted/AGENT_TASK_TIMED_OUT).
   */
  private expiredOnArrival(run: ActiveRun, kind: "approval" | "question", requestId: string, json: string, expiresAt: string): never {
    try {
      this.store.recordExpiredInteraction({
        request_id: requestId,
        task_id: run.taskId,
        kind,
        status: "stale",
        payload_json: json,
        created_at: nowIso(),
        expires_at: expiresAt,
        resolved_at: null,
        resolution_json: null,
      });
    } catch (err) {
      this.log("interaction.record_failed", { task_id: run.taskId, code: toServerfsError(err).code });
    }
    this.tryEvent(run.taskId, "interaction.expired", { request_id: requestId, kind, on_arrival: true });
    this.abortRun(run, "timeout");
    throw new ServerfsError("AGENT_INTERACTION_EXPIRED", "the interaction expired before it could be asked");
  }

  private async openApproval(run: ActiveRun, req: ApprovalRequest): Promise<ApprovalResolution> {
    const normalized = normalizeApproval(req);
    return (await this.openInteraction(run, "approval", normalized as Record<string, unknown>)) as ApprovalResolution;
  }

  private async openQuestion(run: ActiveRun, req: QuestionRequest): Promise<QuestionResolution> {
    const normalized = normalizeQuestion(req);
    return (await this.openInteraction(run, "question", normalized as unknown as Record<string, unknown>)) as QuestionResolution;
  }

  private abandonInteraction(run: ActiveRun): void {
    const task = this.store.get(run.taskId);
    if (!task?.pending_request_id) return;
    const requestId = task.pending_request_id;
    try {
      this.events.append(run.taskId, "interaction.stale", JSON.stringify({ request_id: requestId }));
      this.store.closeInteraction(requestId, "stale", undefined);
    } catch {
      return;
    }
    if (run.waiter?.requestId === requestId) {
      run.waiter.reject(new ServerfsError("REQUEST_STALE", "the provider withdrew the request"));
      run.waiter = null;
    }
    this.watchers.notify(run.taskId);
  }

  /** Shared checks of §7.1 up to the kind check; returns the pending request row. */
  private pendingFor(taskId: string, requestId: string): InteractionRow {
    if (taskId.length === 0 || requestId.length === 0) throw new ServerfsError("INVALID_REQUEST", "task_id and request_id must be non-empty");
    const req = this.store.getInteraction(requestId);
    if (!req) throw new ServerfsError("REQUEST_NOT_FOUND", `request '${requestId.slice(0, 64)}' not found`);
    if (req.status !== "pending") {
      throw new ServerfsError(req.status === "resolved" ? "REQUEST_ALREADY_RESOLVED" : "REQUEST_STALE", "request is no longer pending");
    }
    const task = this.store.require(taskId);
    if (task.pending_request_id !== requestId) throw new ServerfsError("REQUEST_STALE", "request does not belong to this task's pending interaction");
    if (req.expires_at && req.expires_at <= nowIso()) {
      // §7.1/§7.4: a late answer interrupts the task (if its timer has not yet) and is REQUEST_STALE.
      // When expires_at is the task deadline, the deadline is what ran out (AGENT_TASK_TIMED_OUT).
      const run = this.active.get(taskId);
      const deadlinePassed = task.deadline_at !== null && task.deadline_at <= nowIso();
      if (run) this.abortRun(run, deadlinePassed ? "timeout" : "interaction_timeout");
      throw new ServerfsError("REQUEST_STALE", "request has expired");
    }
    return req;
  }

  private async respondApproval(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const taskId = params.task_id as string;
    const requestId = params.request_id as string;
    const req = this.pendingFor(taskId, requestId);
    if (req.kind !== "approval") throw new ServerfsError("INVALID_APPROVAL_DECISION", "request is not an approval");
    const payload = JSON.parse(req.payload_json) as ApprovalRequest;
    const decided_by = decidedBy(params);
    const resolution = validateApprovalAnswer(payload, {
      ...(params.decision !== undefined ? { decision: params.decision as string } : {}),
      ...(params.option_id !== undefined ? { option_id: params.option_id as string } : {}),
      ...(params.granted_permission_ids !== undefined ? { granted_permission_ids: params.granted_permission_ids } : {}),
    });
    this.events.append(
      taskId,
      "approval.resolved",
      JSON.stringify(
        resolution.option_id
          ? { decision: resolution.decision, option_id: resolution.option_id, option_kind: resolution.option_kind, ...decided_by }
          : { decision: resolution.decision, ...decided_by },
      ),
    );
    const task = this.store.closeInteraction(requestId, "resolved", resolution);
    const run = this.active.get(taskId);
    if (run?.waiter?.requestId === requestId) {
      const w = run.waiter;
      run.waiter = null;
      if (resolution.decision === "cancel_task") w.reject(new ServerfsError("REQUEST_STALE", "task cancelled"));
      else w.resolve(resolution);
    }
    this.watchers.notify(taskId);
    if (resolution.decision === "cancel_task") await this.cancel(taskId);
    return { task_id: taskId, request_id: requestId, resolved: true, correlation_id: task.correlation_id };
  }

  private answerQuestion(taskId: string, requestId: string, answers: unknown, decided_by: { decided_by?: DecidedBy }): Record<string, unknown> {
    const req = this.pendingFor(taskId, requestId);
    if (req.kind !== "question") throw new ServerfsError("INVALID_QUESTION_ANSWER", "request is not a question");
    const normalized = validateAnswers(JSON.parse(req.payload_json) as QuestionRequest, answers);
    const resolution: QuestionResolution = { answers: normalized };
    this.events.append(taskId, "question.answered", JSON.stringify({ question_count: normalized.length, ...decided_by }));
    const task = this.store.closeInteraction(requestId, "resolved", resolution);
    const run = this.active.get(taskId);
    if (run?.waiter?.requestId === requestId) {
      const w = run.waiter;
      run.waiter = null;
      w.resolve(resolution);
    }
    this.watchers.notify(taskId);
    return { task_id: taskId, request_id: requestId, resolved: true, correlation_id: task.correlation_id };
  }

  private async sendMessage(taskId: string, message: string): Promise<Record<string, unknown>> {
    if (utf8Bytes(message) > this.limits.max_message_bytes) {
      throw new ServerfsError("AGENT_MESSAGE_TOO_LARGE", `message exceeds ${this.limits.max_message_bytes} bytes`);
    }
    const task = this.store.require(taskId);
    if (isTerminal(task.status)) throw new ServerfsError("AGENT_TASK_TERMINAL", "task is finished; submit a continuation instead");
    if (task.status === "queued" || task.status === "starting") throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "task has not started yet");
    const adapter = this.deps.adapters.get(task.runtime);
    if (!adapter) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "runtime is not available");
    if (!adapter.sendMessage) throw new ServerfsError("AGENT_PROVIDER_ERROR", "this runtime does not support live steering");
    if (!this.active.has(taskId)) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "task is not running in this Bridge");
    await adapter.sendMessage(taskId, message);
    this.events.append(taskId, "user.message", JSON.stringify({ bytes: utf8Bytes(message) }));
    return { task_id: taskId, accepted: true, correlation_id: task.correlation_id };
  }

  // ---------------------------------------------------------------------------------------------
  // Cancel (§3.4): terminal-first, idempotent.

  async cancel(taskId: string): Promise<Record<string, unknown>> {
    const task = this.store.require(taskId);
    if (isTerminal(task.status)) {
      this.gc();
      return { task_id: taskId, status: task.status, correlation_id: task.correlation_id };
    }
    const run = this.active.get(taskId);
    if (run) {
      this.abortRun(run, "cancel");
    } else {
      // Not run by this process (cannot normally happen after restart reconciliation): persist only.
      this.tryEvent(taskId, "task.cancelled", {});
      this.store.transition(taskId, "cancelled");
      this.watchers.notify(taskId);
    }
    const after = this.store.require(taskId);
    return { task_id: taskId, status: after.status, correlation_id: after.correlation_id };
  }

  // ---------------------------------------------------------------------------------------------
  // Reads

  taskView(row: TaskRow): Record<string, unknown> {
    const view: Record<string, unknown> = {
      task_id: row.task_id,
      runtime: row.runtime,
      workdir_alias: row.workdir_alias,
      workdir_slot: 0,
      relative_cwd: row.relative_cwd,
      profile: row.profile,
      status: row.status,
      created_at: row.created_at,
      started_at: row.started_at,
      updated_at: row.updated_at,
      completed_at: row.completed_at,
      deadline_at: row.deadline_at,
      continue_from_task_id: row.continue_from_task_id,
      correlation_id: row.correlation_id,
      idempotency_key: row.idempotency_key,
      requested_model: row.requested_model,
      final_response: row.final_response,
      final_response_truncated: row.result_storage === "spool",
      result:
        row.result_storage === null
          ? null
          : {
              storage: row.result_storage,
              size_bytes: row.result_size_bytes,
              sha256: row.result_sha256,
              retrievable: row.result_storage === "spool",
            },
      manifest: row.manifest_json ? JSON.parse(row.manifest_json) : null,
      manifest_sha256: row.manifest_sha256,
      error_code: row.error_code,
      error_message: row.error_message,
      pending_request_id: row.pending_request_id,
    };
    if (row.pending_request_id) {
      const req = this.store.getInteraction(row.pending_request_id);
      if (req) {
        view.pending_request = {
          request_id: req.request_id,
          task_id: req.task_id,
          kind: req.kind,
          status: req.status,
          payload: JSON.parse(req.payload_json),
          created_at: req.created_at,
          expires_at: req.expires_at,
          resolved_at: req.resolved_at,
          resolution: req.resolution_json ? JSON.parse(req.resolution_json) : null,
        };
      }
    }
    return view;
  }

  private async getTask(taskId: string, waitSeconds: number): Promise<Record<string, unknown>> {
    if (waitSeconds < 0 || waitSeconds > 50) throw new ServerfsError("INVALID_REQUEST", "wait_seconds must be between 0 and 50");
    let row = this.store.require(taskId);
    if (waitSeconds > 0 && !isTerminal(row.status)) {
      const before = `${row.status}|${row.pending_request_id}`;
      const until = Date.now() + waitSeconds * 1000;
      while (Date.now() < until && !this.closed) {
        await this.watchers.wait(taskId, until - Date.now());
        row = this.store.require(taskId);
        if (`${row.status}|${row.pending_request_id}` !== before) break;
      }
    }
    return this.taskView(row);
  }

  private readEvents(taskId: string, after: number, limit: number): Record<string, unknown> {
    if (after < 0) throw new ServerfsError("INVALID_LIMIT", "after_event_id must be ≥ 0");
    if (limit < 1 || limit > 500) throw new ServerfsError("INVALID_LIMIT", "limit must be between 1 and 500");
    const task = this.store.require(taskId);
    const events = this.events.read(taskId, after, limit, task.correlation_id);
    const last = events[events.length - 1];
    return { correlation_id: task.correlation_id, events, next_after_event_id: last ? last.event_id : after };
  }

  private readResult(taskId: string, offset: number, maxBytes: number): Record<string, unknown> {
    const task = this.store.require(taskId);
    if (maxBytes < 1 || maxBytes > this.limits.max_result_chunk_bytes) {
      throw new ServerfsError("INVALID_RESULT_LIMIT", `max_bytes must be between 1 and ${this.limits.max_result_chunk_bytes}`);
    }
    if (offset < 0) throw new ServerfsError("INVALID_RESULT_OFFSET", "offset_bytes must be ≥ 0");
    if (task.result_storage !== "spool") {
      throw new ServerfsError("AGENT_RESULT_NOT_RETRIEVABLE", "the result is not spooled; read final_response from get_agent_task");
    }
    const chunk = readSpoolChunk(this.deps.paths.spoolDir, taskId, offset, maxBytes);
    return { ...chunk, correlation_id: task.correlation_id };
  }

  private listTasks(limit: number, status: string | null): Record<string, unknown> {
    if (limit < 1 || limit > 500) throw new ServerfsError("INVALID_LIMIT", "limit must be between 1 and 500");
    const rows = this.store.list(limit, status);
    return {
      tasks: rows.map((r) => ({
        task_id: r.task_id,
        runtime: r.runtime,
        workdir_alias: r.workdir_alias,
        profile: r.profile,
        status: r.status,
        created_at: r.created_at,
        completed_at: r.completed_at,
        error_code: r.error_code,
        pending_request_id: r.pending_request_id,
        correlation_id: r.correlation_id,
      })),
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Retention GC (§3.10): terminal, old enough, not referenced by a recovery guard.

  gc(): number {
    const cutoff = new Date(Date.now() - this.limits.retention_seconds * 1000).toISOString();
    const candidates = this.store.expiredTerminal(cutoff);
    if (candidates.length === 0) return 0;
    const guarded = new Set<string>();
    for (const g of listGuards(this.deps.paths.guardDir)) {
      const s = readGuard(g);
      if (s.state === "present") guarded.add(s.record.task_id);
    }
    const doomed = candidates.filter((t) => !guarded.has(t.task_id) && !this.active.has(t.task_id));
    this.events.flush();
    this.store.delete(doomed.map((t) => t.task_id));
    for (const t of doomed) {
      if (t.result_storage === "spool") deleteSpool(this.deps.paths.spoolDir, t.task_id);
      this.events.forget(t.task_id);
    }
    return doomed.length;
  }
}

function messageFor(code: string): string {
  switch (code) {
    case "AGENT_TASK_TIMED_OUT":
      return "the task reached its deadline";
    case "AGENT_INTERACTION_TIMED_OUT":
      return "nobody answered the pending interaction in time";
    case "BRIDGE_SHUTDOWN":
      return "the Bridge shut down while the task was active";
    default:
      return code;
  }
}

export function ensureFileGone(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // absent
  }
}

/** Who answered an interaction (docs/agent-bridge.md), recorded in its history event. */
type DecidedBy = "assistant" | "human" | "operator";
const DECIDERS: ReadonlySet<string> = new Set<DecidedBy>(["assistant", "human", "operator"]);

function decidedBy(params: Record<string, unknown>): { decided_by?: DecidedBy } {
  const v = params.decided_by;
  if (v === undefined) return {};
  if (typeof v !== "string" || !DECIDERS.has(v)) throw new ServerfsError("INVALID_REQUEST", "decided_by must be assistant, human or operator");
  return { decided_by: v as DecidedBy };
}
