// The Bridge service: owns every task from submit to terminal state. This file is the facade:
// one public method per Bridge RPC, each delegating to the part that owns the concern
// (src/bridge/service/: admission, task-run, interactions, views, recovery, retention, control,
// runtimes). The contracts are in docs/design/ (task-lifecycle, lease-and-guard, events, interactions).
import { stopProof } from "../../platform/index.ts";
import { ServerfsError } from "../errors.ts";
import type { RuntimeInfo } from "../runtimes/types.ts";
import { VERSION } from "../version.ts";
import { defineHandlers, dispatchTable } from "./rpc/dispatch.ts";
import type { BridgeStatusResult, HandlerParams, Result, TaskView } from "./rpc/methods.ts";
import { PROVIDER_CANCEL_BOUND_MS, type BridgeLimits } from "./limits.ts";
import { nowIso, type TaskRow, type TaskStore } from "./store/tasks.ts";
import type { EventLog } from "./store/events.ts";
import { Admission, type SubmitParams } from "./service/admission.ts";
import { cancel, sendMessage } from "./service/control.ts";
import { bounded, ServiceCore, type ServiceDeps } from "./service/core.ts";
import { HeapCollector, RELEASES_PER_COLLECTION, SHRINK_AFTER_IDLE_MS } from "../common/heap-collector.ts";
import { InteractionBroker } from "./service/interactions.ts";
import { Recovery } from "./service/recovery.ts";
import { collectGarbage } from "./service/retention.ts";
import { listRuntimes, runtimeModels } from "./service/runtimes.ts";
import { TaskRun } from "./service/task-run.ts";
import { TaskViews } from "./service/views.ts";

export type { LogFn, ServiceDeps } from "./service/core.ts";
export type { SubmitParams } from "./service/admission.ts";

export class BridgeService {
  readonly startedAt = nowIso();
  private readonly core: ServiceCore;
  private readonly recovery: Recovery;
  private readonly admission: Admission;
  private readonly interactions: InteractionBroker;
  private readonly views: TaskViews;
  private readonly heap: HeapCollector;

  constructor(deps: ServiceDeps) {
    const core = new ServiceCore(deps);
    this.core = core;
    this.recovery = new Recovery(core);
    this.interactions = new InteractionBroker(core, (taskId) => this.cancel(taskId));
    this.views = new TaskViews(core);
    this.heap = new HeapCollector(() => core.active.size, deps.collectHeap, RELEASES_PER_COLLECTION, { shrinkAfterMs: SHRINK_AFTER_IDLE_MS });
    this.admission = new Admission(core, this.recovery, () => this.gc(), (plan, adapter) => {
      TaskRun.start(core, this.interactions, plan, adapter, () => {
        this.gc();
        this.heap.done();
      });
    });
  }

  get limits(): BridgeLimits {
    return this.core.limits;
  }

  get events(): EventLog {
    return this.core.events;
  }

  get store(): TaskStore {
    return this.core.store;
  }

  activeCount(): number {
    return this.core.active.size;
  }

  isClosed(): boolean {
    return this.core.closed;
  }

  /** Retention GC, then restart reconciliation: returns how many tasks were interrupted. */
  async start(): Promise<number> {
    this.gc();
    const reconciled = await this.recovery.reconcileAtStart();
    this.core.events.flush();
    return reconciled;
  }

  /** Running tasks become interrupted/BRIDGE_SHUTDOWN and their provider trees are stopped. */
  async close(): Promise<void> {
    const { core } = this;
    if (core.closed) return;
    core.closed = true;
    this.heap.close();
    const runs = [...core.active.values()];
    for (const run of runs) run.abort("shutdown");
    await bounded(Promise.all(runs.map((r) => r.done)), PROVIDER_CANCEL_BOUND_MS + core.stopGraceMs + 5000);
    core.watchers.wakeAll();
    core.deps.leases.releaseAll();
    core.events.close();
    core.store.flushCapabilities();
  }

  /** The RPC entry point: the typed method table (src/bridge/rpc/) validates, fills defaults, dispatches. */
  async dispatch(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.core.closed) throw new ServerfsError("BRIDGE_CLOSED", "the Bridge is shutting down");
    return this.table(method, params);
  }

  /** The RPC surface: one typed handler per method of the Bridge method table. */
  private readonly table = dispatchTable(
    defineHandlers({
      "runtime.list": async () => ({ runtimes: await this.listRuntimes() }),
      "runtime.models": (p) => this.runtimeModels(p),
      "task.submit": (p) => this.submit(p),
      "task.get": (p) => this.getTask(p.task_id, p.wait_seconds),
      "task.events": (p) => this.readEvents(p.task_id, p.after_event_id, p.limit),
      "task.result.read": (p) => this.readResult(p.task_id, p.offset_bytes, p.max_bytes),
      "task.approval.respond": (p) => this.respondApproval(p),
      "task.question.answer": (p) => this.answerQuestion(p.task_id, p.request_id, p.answers, p.decided_by, p.action),
      "task.message.send": (p) => this.sendMessage(p.task_id, p.message),
      "task.cancel": (p) => this.cancel(p.task_id),
      "task.list": (p) => this.listTasks(p.limit, p.status),
      "bridge.status": () => this.status(),
    }),
  );

  // One public method per RPC, named after it.

  listRuntimes(): Promise<RuntimeInfo[]> {
    return listRuntimes(this.core);
  }

  runtimeModels(params: HandlerParams<"runtime.models">): Promise<Result<"runtime.models">> {
    return runtimeModels(this.core, params);
  }

  submit(p: SubmitParams): Promise<Result<"task.submit">> {
    return this.admission.submit(p);
  }

  getTask(taskId: string, waitSeconds: number): Promise<Result<"task.get">> {
    return this.views.getTask(taskId, waitSeconds);
  }

  readEvents(taskId: string, after: number, limit: number): Result<"task.events"> {
    return this.views.readEvents(taskId, after, limit);
  }

  readResult(taskId: string, offset: number, maxBytes: number): Result<"task.result.read"> {
    return this.views.readResult(taskId, offset, maxBytes);
  }

  respondApproval(params: HandlerParams<"task.approval.respond">): Promise<Result<"task.approval.respond">> {
    return this.interactions.respondApproval(params);
  }

  answerQuestion(taskId: string, requestId: string, answers: unknown, decidedBy?: string, action?: string): Result<"task.question.answer"> {
    return this.interactions.answerQuestion(taskId, requestId, answers, decidedBy, action);
  }

  sendMessage(taskId: string, message: string): Promise<Result<"task.message.send">> {
    return sendMessage(this.core, taskId, message);
  }

  async cancel(taskId: string): Promise<Result<"task.cancel">> {
    return cancel(this.core, taskId, () => this.gc());
  }

  listTasks(limit: number, status: string | null): Result<"task.list"> {
    return this.views.listTasks(limit, status);
  }

  status(): BridgeStatusResult {
    return {
      version: VERSION,
      pid: process.pid,
      started_at: this.startedAt,
      active_tasks: this.core.store.countActive(),
      running_in_process: this.core.active.size,
      rss_bytes: process.memoryUsage().rss,
      stop_proof: stopProof(),
      config_identity: this.core.configIdentity,
      settings_identity: this.core.settingsIdentity,
    };
  }

  taskView(row: TaskRow): TaskView {
    return this.views.taskView(row);
  }

  /** Retention: returns how many tasks were deleted. */
  gc(): number {
    return collectGarbage(this.core);
  }
}
