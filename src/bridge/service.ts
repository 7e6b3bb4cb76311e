// The Bridge service: owns every task from submit to terminal state. This file is the facade:
// one public method per Bridge RPC, each delegating to the part that owns the concern
// (src/bridge/service/: admission, task-run, interactions, views, recovery, retention, control,
// runtimes). The contracts are in docs/design/ (task-lifecycle, lease-and-guard, events, interactions).
import { ServerfsError } from "../errors.ts";
import type { RuntimeInfo } from "../runtimes/types.ts";
import { VERSION } from "../version.ts";
import { PROVIDER_CANCEL_BOUND_MS, type BridgeLimits } from "./limits.ts";
import { nowIso, type TaskRow, type TaskStore } from "./store/tasks.ts";
import type { EventLog } from "./store/events.ts";
import { Admission, type SubmitParams, type SubmitResult } from "./service/admission.ts";
import { cancel, sendMessage, type CancelResult } from "./service/control.ts";
import { bounded, ServiceCore, type ServiceDeps } from "./service/core.ts";
import { InteractionBroker, type ApprovalResponseParams, type Resolved } from "./service/interactions.ts";
import { Recovery } from "./service/recovery.ts";
import { collectGarbage } from "./service/retention.ts";
import { listRuntimes, runtimeModels, type RuntimeModelsParams } from "./service/runtimes.ts";
import { TaskRun } from "./service/task-run.ts";
import { TaskViews } from "./service/views.ts";

export type { LogFn, ServiceDeps } from "./service/core.ts";
export type { SubmitParams } from "./service/admission.ts";

export type BridgeStatus = {
  version: string;
  pid: number;
  started_at: string;
  active_tasks: number;
  running_in_process: number;
  rss_bytes: number;
};

function str(params: Record<string, unknown>, key: string): string | null {
  const v = params[key];
  return typeof v === "string" ? v : null;
}

function int(params: Record<string, unknown>, key: string, fallback: number): number {
  const v = params[key];
  return typeof v === "number" ? v : fallback;
}

export class BridgeService {
  readonly startedAt = nowIso();
  private readonly core: ServiceCore;
  private readonly recovery: Recovery;
  private readonly admission: Admission;
  private readonly interactions: InteractionBroker;
  private readonly views: TaskViews;

  constructor(deps: ServiceDeps) {
    const core = new ServiceCore(deps);
    this.core = core;
    this.recovery = new Recovery(core);
    this.interactions = new InteractionBroker(core, (taskId) => this.cancel(taskId));
    this.views = new TaskViews(core);
    this.admission = new Admission(core, this.recovery, () => this.gc(), (plan, adapter) => {
      TaskRun.start(core, this.interactions, plan, adapter, () => this.gc());
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
    const runs = [...core.active.values()];
    for (const run of runs) run.abort("shutdown");
    await bounded(Promise.all(runs.map((r) => r.done)), PROVIDER_CANCEL_BOUND_MS + core.stopGraceMs + 5000);
    core.watchers.wakeAll();
    core.deps.leases.releaseAll();
    core.events.close();
  }

  /** The RPC entry point; params were validated against ipc/params.ts by the endpoint. */
  async dispatch(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.core.closed) throw new ServerfsError("BRIDGE_CLOSED", "the Bridge is shutting down");
    switch (method) {
      case "runtime.list":
        return { runtimes: await this.listRuntimes() };
      case "runtime.models":
        return this.runtimeModels(params as unknown as RuntimeModelsParams);
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
        return this.respondApproval(params as unknown as ApprovalResponseParams);
      case "task.question.answer":
        return this.answerQuestion(params.task_id as string, params.request_id as string, params.answers);
      case "task.message.send":
        return this.sendMessage(params.task_id as string, params.message as string);
      case "task.cancel":
        return this.cancel(params.task_id as string);
      case "task.list":
        return this.listTasks(int(params, "limit", 50), str(params, "status"));
      case "bridge.status":
        return this.status();
      default:
        throw new ServerfsError("METHOD_NOT_FOUND", `unknown method '${method.slice(0, 64)}'`);
    }
  }

  // One public method per RPC, named after it.

  listRuntimes(): Promise<RuntimeInfo[]> {
    return listRuntimes(this.core);
  }

  runtimeModels(params: RuntimeModelsParams): Promise<Record<string, unknown>> {
    return runtimeModels(this.core, params);
  }

  submit(p: SubmitParams): Promise<SubmitResult> {
    return this.admission.submit(p);
  }

  getTask(taskId: string, waitSeconds: number): Promise<Record<string, unknown>> {
    return this.views.getTask(taskId, waitSeconds);
  }

  readEvents(taskId: string, after: number, limit: number): Record<string, unknown> {
    return this.views.readEvents(taskId, after, limit);
  }

  readResult(taskId: string, offset: number, maxBytes: number): Record<string, unknown> {
    return this.views.readResult(taskId, offset, maxBytes);
  }

  respondApproval(params: ApprovalResponseParams): Promise<Resolved> {
    return this.interactions.respondApproval(params);
  }

  answerQuestion(taskId: string, requestId: string, answers: unknown): Resolved {
    return this.interactions.answerQuestion(taskId, requestId, answers);
  }

  sendMessage(taskId: string, message: string): Promise<Record<string, unknown>> {
    return sendMessage(this.core, taskId, message);
  }

  async cancel(taskId: string): Promise<CancelResult> {
    return cancel(this.core, taskId, () => this.gc());
  }

  listTasks(limit: number, status: string | null): Record<string, unknown> {
    return this.views.listTasks(limit, status);
  }

  status(): BridgeStatus {
    return {
      version: VERSION,
      pid: process.pid,
      started_at: this.startedAt,
      active_tasks: this.core.store.countActive(),
      running_in_process: this.core.active.size,
      rss_bytes: process.memoryUsage().rss,
    };
  }

  taskView(row: TaskRow): Record<string, unknown> {
    return this.views.taskView(row);
  }

  /** Retention: returns how many tasks were deleted. */
  gc(): number {
    return collectGarbage(this.core);
  }
}
