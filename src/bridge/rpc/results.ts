// What each Bridge RPC method returns. Type aliases (not interfaces) on purpose: an alias is
// assignable to an index-signature object, which is what MCP tools' loose output schemas infer.
// The contract in prose: docs/design/bridge-rpc.md.
import type { RuntimeInfo } from "../../config/runtime-info.ts";
import type { TaskStatus } from "../lifecycle.ts";
import type { ResultChunk } from "../spool.ts";
import type { EventRecord } from "../store/events.ts";
import type { InteractionRow, TaskRow } from "../store/tasks.ts";
import type { Advice } from "../service/advice.ts";

/** An interface copied into an alias, so it is assignable to index-signature objects. */
type Alias<T> = { [K in keyof T]: T[K] };

export type RuntimeListResult = { runtimes: RuntimeInfo[] };

/** The runtime's own catalog report, passed through; `model_advice` is added in advice mode. */
export type RuntimeModelsResult = {
  runtime: string;
  status: "ok" | "unsupported" | "unavailable";
  scope: string;
  source: string;
  models: Array<Record<string, unknown>>;
  detail?: string;
  model_advice?: { status: "disabled"; automatic: false };
  [extra: string]: unknown;
};

export type SubmitResult = {
  task_id: string;
  status: TaskStatus;
  correlation_id: string | null;
  idempotency_key: string | null;
};

export type PendingRequestView = {
  request_id: string;
  task_id: string;
  kind: InteractionRow["kind"];
  status: InteractionRow["status"];
  payload: Record<string, unknown>;
  created_at: string;
  expires_at: string | null;
  resolved_at: string | null;
  resolution: Record<string, unknown> | null;
  /** The advisor's recommendation (advisory only; docs/agent-bridge.md, "Approval advice"). */
  advice: Advice | null;
};

/** The row's own columns, as stored, plus what a view derives from them. */
export type TaskView = Alias<
  Pick<
    TaskRow,
    | "task_id"
    | "runtime"
    | "workdir_alias"
    | "relative_cwd"
    | "profile"
    | "status"
    | "created_at"
    | "started_at"
    | "updated_at"
    | "completed_at"
    | "deadline_at"
    | "continue_from_task_id"
    | "correlation_id"
    | "idempotency_key"
    | "requested_model"
    | "final_response"
    | "manifest_sha256"
    | "error_code"
    | "error_message"
    | "pending_request_id"
  > & {
    workdir_slot: number;
    /** When the task's newest event was recorded (ISO-8601); null before its first. */
    last_event_at: string | null;
    final_response_truncated: boolean;
    result: { storage: string; size_bytes: number | null; sha256: string | null; retrievable: boolean } | null;
    manifest: Record<string, unknown> | null;
    /** Present only while an interaction is pending. */
    pending_request?: PendingRequestView;
    /** The agent's latest context-window and cost report (ACP usage_update); null before any. */
    usage: TaskUsage | null;
  }
>;

/** `used`/`size` are tokens in context and the window size; `cost` is the session's cumulative cost. */
export type TaskUsage = {
  used: number | null;
  size: number | null;
  cost: { amount: number; currency: string } | null;
  updated_at: string;
};

export type TaskEvent = Alias<EventRecord>;

export type EventsResult = {
  correlation_id: string | null;
  events: TaskEvent[];
  next_after_event_id: number;
};

export type ResultReadResult = Alias<ResultChunk & { correlation_id: string | null }>;

export type ResolvedResult = { task_id: string; request_id: string; resolved: true; correlation_id: string | null };

export type MessageResult = { task_id: string; accepted: true; correlation_id: string | null };

/**
 * Why a cancelled task still holds its workdir (docs/design/task-lifecycle.md#cancel):
 * `stop_pending` — its process tree is not proved gone yet, the writer lease is still held
 * (writers get WORKDIR_BUSY); `stop_not_proved` — the stop could not be proved, the recovery
 * guard stays (writers get WORKDIR_RECOVERY_REQUIRED until a recovery sweep proves it).
 */
export type WorkdirHoldReason = "stop_pending" | "stop_not_proved";

export type CancelResult = {
  task_id: string;
  status: TaskStatus;
  correlation_id: string | null;
  /** True once this task holds neither the workdir's writer lease nor its recovery guard. */
  workdir_free: boolean;
  /** Null exactly when `workdir_free` is true. */
  workdir_hold_reason: WorkdirHoldReason | null;
};

export type TaskSummary = Pick<
  TaskRow,
  | "task_id"
  | "runtime"
  | "workdir_alias"
  | "profile"
  | "status"
  | "created_at"
  | "completed_at"
  | "error_code"
  | "pending_request_id"
  | "correlation_id"
> & {
  last_event_at: string | null;
  /** The pending request's advice, when one is pending. */
  pending_advice: Advice | null;
};

export type TaskListResult = { tasks: TaskSummary[] };

export type BridgeStatusResult = {
  version: string;
  pid: number;
  started_at: string;
  active_tasks: number;
  running_in_process: number;
  rss_bytes: number;
  /** What this Bridge's stop proofs rest on (docs/platform.md, "Stop"). */
  stop_proof: { path: "cgroup" | "freeze" | "job"; reason: string };
  /** What decides where and what agents run, as this Bridge loaded it (src/config/bridge-identity.ts). */
  config_identity: string;
  /** The rest of [agent] this Bridge applies: timeouts, caps, retention (src/config/bridge-identity.ts). */
  settings_identity: string;
};
