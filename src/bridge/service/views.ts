// What a caller reads about tasks: the task view (with its pending request), the long poll of
// task.get, the event page, a spooled result chunk and the task list. Reads never change state.
import { ServerfsError } from "../../errors.ts";
import { isTerminal } from "../lifecycle.ts";
import { readSpoolChunk } from "../spool.ts";
import type { TaskRow } from "../store/tasks.ts";
import type { Result, TaskView } from "../rpc/methods.ts";
import type { TaskUsage } from "../rpc/results.ts";
import type { ServiceCore } from "./core.ts";
import type { Advice } from "./advice.ts";

/** task.get waits at most this long for a change of status or pending request. */
const MAX_WAIT_SECONDS = 50;
const MAX_PAGE = 500;

export class TaskViews {
  constructor(private readonly core: ServiceCore) {}

  taskView(row: TaskRow): TaskView {
    const view: TaskView = {
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
      last_event_at: this.core.events.last(row.task_id)?.created_at ?? null,
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
      usage: this.usage(row.task_id),
    };
    if (row.pending_request_id) {
      const req = this.core.store.getInteraction(row.pending_request_id);
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
          advice: req.advice_json ? JSON.parse(req.advice_json) : null,
        };
      }
    }
    return view;
  }

  /** The newest usage.updated event, read back into its documented shape. */
  private usage(taskId: string): TaskUsage | null {
    const last = this.core.events.lastOfType(taskId, "usage.updated");
    if (last === null) return null;
    const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
    const c = last.payload.cost as { amount?: unknown; currency?: unknown } | null | undefined;
    const cost = c && typeof c === "object" && num(c.amount) !== null && typeof c.currency === "string" ? { amount: c.amount as number, currency: c.currency } : null;
    return { used: num(last.payload.used), size: num(last.payload.size), cost, updated_at: last.created_at };
  }

  private pendingAdvice(requestId: string | null): Advice | null {
    if (requestId === null) return null;
    const json = this.core.store.getInteraction(requestId)?.advice_json;
    return json ? (JSON.parse(json) as Advice) : null;
  }

  async getTask(taskId: string, waitSeconds: number): Promise<Result<"task.get">> {
    const { core } = this;
    if (waitSeconds < 0 || waitSeconds > MAX_WAIT_SECONDS) throw new ServerfsError("INVALID_REQUEST", "wait_seconds must be between 0 and 50");
    let row = core.store.require(taskId);
    if (waitSeconds > 0 && !isTerminal(row.status)) {
      const before = `${row.status}|${row.pending_request_id}`;
      const until = Date.now() + waitSeconds * 1000;
      while (Date.now() < until && !core.closed) {
        await core.watchers.wait(taskId, until - Date.now());
        row = core.store.require(taskId);
        if (`${row.status}|${row.pending_request_id}` !== before) break;
      }
    }
    return this.taskView(row);
  }

  readEvents(taskId: string, after: number, limit: number): Result<"task.events"> {
    if (after < 0) throw new ServerfsError("INVALID_LIMIT", "after_event_id must be ≥ 0");
    if (limit < 1 || limit > MAX_PAGE) throw new ServerfsError("INVALID_LIMIT", "limit must be between 1 and 500");
    const task = this.core.store.require(taskId);
    const events = this.core.events.read(taskId, after, limit, task.correlation_id);
    const last = events[events.length - 1];
    return { correlation_id: task.correlation_id, events, next_after_event_id: last ? last.event_id : after };
  }

  readResult(taskId: string, offset: number, maxBytes: number): Result<"task.result.read"> {
    const { core } = this;
    const task = core.store.require(taskId);
    if (maxBytes < 1 || maxBytes > core.limits.max_result_chunk_bytes) {
      throw new ServerfsError("INVALID_RESULT_LIMIT", `max_bytes must be between 1 and ${core.limits.max_result_chunk_bytes}`);
    }
    if (offset < 0) throw new ServerfsError("INVALID_RESULT_OFFSET", "offset_bytes must be ≥ 0");
    if (task.result_storage !== "spool") {
      throw new ServerfsError("AGENT_RESULT_NOT_RETRIEVABLE", "the result is not spooled; read final_response from get_agent_task");
    }
    const chunk = readSpoolChunk(core.deps.paths.spoolDir, taskId, offset, maxBytes);
    return { ...chunk, correlation_id: task.correlation_id };
  }

  listTasks(limit: number, status: string | null): Result<"task.list"> {
    if (limit < 1 || limit > MAX_PAGE) throw new ServerfsError("INVALID_LIMIT", "limit must be between 1 and 500");
    const rows = this.core.store.list(limit, status);
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
        last_event_at: this.core.events.last(r.task_id)?.created_at ?? null,
        pending_advice: this.pendingAdvice(r.pending_request_id),
      })),
    };
  }
}
