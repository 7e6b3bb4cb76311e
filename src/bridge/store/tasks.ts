// Task, interaction, idempotency and capability rows. Every write is one BEGIN IMMEDIATE
// transaction (capability snapshots ride with the next one, see putCapabilities); a status change
// and its side effects (completed_at, stale request) commit together.
import type { Database } from "bun:sqlite";
import { ServerfsError } from "../../errors.ts";
import { assertTransition, isTerminal, type TaskStatus } from "../lifecycle.ts";

export interface TaskRow {
  task_id: string;
  runtime: string;
  workdir_alias: string;
  relative_cwd: string;
  profile: string;
  status: TaskStatus;
  created_at: string;
  started_at: string | null;
  updated_at: string;
  completed_at: string | null;
  error_code: string | null;
  error_message: string | null;
  final_response: string | null;
  result_storage: string | null;
  result_size_bytes: number | null;
  result_sha256: string | null;
  native_session_id: string | null;
  native_turn_id: string | null;
  pending_request_id: string | null;
  deadline_at: string | null;
  continue_from_task_id: string | null;
  correlation_id: string | null;
  idempotency_key: string | null;
  requested_model: string | null;
  request_fingerprint: string | null;
  manifest_json: string | null;
  manifest_sha256: string | null;
  run_id: string | null;
  provider_started: number;
  event_count: number;
}

export interface InteractionRow {
  request_id: string;
  task_id: string;
  kind: "approval" | "question";
  status: "pending" | "resolved" | "stale";
  payload_json: string;
  created_at: string;
  expires_at: string | null;
  resolved_at: string | null;
  resolution_json: string | null;
  /** The advice shown with the request (null only for rows written before advice existed). */
  advice_json: string | null;
}

/** The columns a run writes as it goes: its outcome, its provider session and its pending request. */
type RunField =
  | "error_code"
  | "error_message"
  | "final_response"
  | "result_storage"
  | "result_size_bytes"
  | "result_sha256"
  | "native_session_id"
  | "native_turn_id"
  | "pending_request_id"
  | "provider_started";

/** What admission supplies; `native_session_id` is carried over when a task continues another. */
export type NewTask = Omit<TaskRow, RunField | "status" | "started_at" | "completed_at" | "event_count"> & { native_session_id: string | null };

/** The active-task count (exported for the test that checks its query plan). */
export const COUNT_ACTIVE_SQL =
  "SELECT COUNT(*) AS n FROM tasks WHERE status IN ('queued','starting','running','waiting_for_approval','waiting_for_question')";
/** Finished tasks completed before `?` (exported for the test that checks its query plan). */
export const EXPIRED_TERMINAL_SQL =
  "SELECT * FROM tasks WHERE completed_at IS NOT NULL AND completed_at < ? AND +status IN ('succeeded','failed','cancelled','interrupted')";

export function nowIso(): string {
  return new Date().toISOString();
}

type Updatable = Partial<Pick<TaskRow, RunField>>;

export class TaskStore {
  /** Called inside every status transaction so queued events land before the status they explain. */
  beforeStatusWrite: () => void = () => {};
  /** Capability snapshots not yet written, by runtime (see putCapabilities). */
  private readonly pendingCapabilities = new Map<string, { fingerprint: string; json: string; measuredAt: string }>();

  constructor(readonly db: Database) {}

  get(taskId: string): TaskRow | null {
    return (this.db.query("SELECT * FROM tasks WHERE task_id = ?").get(taskId) as TaskRow | null) ?? null;
  }

  require(taskId: string): TaskRow {
    const row = this.get(taskId);
    if (!row) throw new ServerfsError("AGENT_TASK_NOT_FOUND", `task '${taskId.slice(0, 64)}' not found`);
    return row;
  }

  findIdempotent(key: string): { task_id: string; request_fingerprint: string } | null {
    return (
      (this.db.query("SELECT task_id, request_fingerprint FROM idempotency WHERE idempotency_key = ?").get(key) as {
        task_id: string;
        request_fingerprint: string;
      } | null) ?? null
    );
  }

  countActive(): number {
    // The active statuses by name, so the status index finds them: NOT IN the terminal ones read
    // the whole index, every finished task of the retention window, at every submit.
    const row = this.db
      .query(COUNT_ACTIVE_SQL)
      .get() as { n: number };
    return row.n;
  }

  /** Insert a queued task; the active-task cap and the idempotency key are checked in the same transaction. */
  insert(task: NewTask, maxActive: number): TaskRow {
    this.db
      .transaction(() => {
        if (this.countActive() >= maxActive) {
          throw new ServerfsError("AGENT_TASK_LIMIT_REACHED", `at most ${maxActive} tasks may be active at once`);
        }
        this.db
          .query(
            `INSERT INTO tasks (task_id, runtime, workdir_alias, relative_cwd, profile, status, created_at, updated_at,
               deadline_at, continue_from_task_id, correlation_id, idempotency_key, requested_model, request_fingerprint,
               manifest_json, manifest_sha256, run_id, native_session_id)
             VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            task.task_id,
            task.runtime,
            task.workdir_alias,
            task.relative_cwd,
            task.profile,
            task.created_at,
            task.updated_at,
            task.deadline_at,
            task.continue_from_task_id,
            task.correlation_id,
            task.idempotency_key,
            task.requested_model,
            task.request_fingerprint,
            task.manifest_json,
            task.manifest_sha256,
            task.run_id,
            task.native_session_id,
          );
        if (task.idempotency_key !== null) {
          try {
            this.db
              .query("INSERT INTO idempotency (idempotency_key, task_id, request_fingerprint) VALUES (?, ?, ?)")
              .run(task.idempotency_key, task.task_id, task.request_fingerprint);
          } catch {
            throw new ServerfsError("AGENT_IDEMPOTENCY_CONFLICT", "idempotency_key is already used by another task");
          }
        }
      })
      .immediate();
    return this.require(task.task_id);
  }

  /**
   * Move a task to `to` (validated), with extra column updates. Entering a terminal state sets
   * completed_at, clears pending_request_id and stales a still-pending request, atomically.
   */
  transition(taskId: string, to: TaskStatus, fields: Updatable = {}, expectFrom?: readonly TaskStatus[]): TaskRow {
    return this.db
      .transaction(() => {
        this.beforeStatusWrite();
        this.writePendingCapabilities();
        const row = this.require(taskId);
        if (expectFrom && !expectFrom.includes(row.status)) {
          throw new ServerfsError("INVALID_TASK_TRANSITION", `task is ${row.status}`);
        }
        assertTransition(row.status, to);
        const now = nowIso();
        const sets: string[] = ["status = ?", "updated_at = ?"];
        const args: (string | number | null)[] = [to, now];
        if (row.status === "queued" && to === "starting") {
          sets.push("started_at = ?");
          args.push(now);
        }
        if (isTerminal(to)) {
          sets.push("completed_at = ?", "pending_request_id = NULL");
          args.push(now);
          this.db
            .query("UPDATE interactions SET status = 'stale' WHERE task_id = ? AND status = 'pending'")
            .run(taskId);
        }
        for (const [k, v] of Object.entries(fields)) {
          if (isTerminal(to) && k === "pending_request_id") continue;
          sets.push(`${k} = ?`);
          args.push(v as string | number | null);
        }
        args.push(taskId);
        this.db.query(`UPDATE tasks SET ${sets.join(", ")} WHERE task_id = ?`).run(...args);
        return this.require(taskId);
      })
      .immediate();
  }

  /**
   * Several writes as one transaction: one commit, so one sync to disk instead of one per write.
   * Only for writes nobody can observe in between (no await among them); nested writes become
   * savepoints of this one.
   */
  together<T>(writes: () => T): T {
    return this.db.transaction(writes).immediate();
  }

  update(taskId: string, fields: Updatable): void {
    const keys = Object.keys(fields);
    if (keys.length === 0) return;
    const sets = keys.map((k) => `${k} = ?`).concat("updated_at = ?");
    const args = keys.map((k) => (fields as Record<string, string | number | null>)[k]!);
    this.db.query(`UPDATE tasks SET ${sets.join(", ")} WHERE task_id = ?`).run(...args, nowIso(), taskId);
  }

  nonTerminal(): TaskRow[] {
    return this.db
      .query(
        "SELECT * FROM tasks WHERE status NOT IN ('succeeded','failed','cancelled','interrupted') ORDER BY created_at, task_id",
      )
      .all() as TaskRow[];
  }

  list(limit: number, status: string | null): TaskRow[] {
    if (status) {
      return this.db
        .query("SELECT * FROM tasks WHERE status = ? ORDER BY created_at DESC, task_id DESC LIMIT ?")
        .all(status, limit) as TaskRow[];
    }
    return this.db.query("SELECT * FROM tasks ORDER BY created_at DESC, task_id DESC LIMIT ?").all(limit) as TaskRow[];
  }

  // Interactions ------------------------------------------------------------------------------

  getInteraction(requestId: string): InteractionRow | null {
    return (
      (this.db.query("SELECT * FROM interactions WHERE request_id = ?").get(requestId) as InteractionRow | null) ?? null
    );
  }

  /** Open a request and move the task running → waiting_for_*, in one transaction. */
  openInteraction(row: InteractionRow): TaskRow {
    return this.db
      .transaction(() => {
        this.beforeStatusWrite();
        this.writePendingCapabilities();
        const task = this.require(row.task_id);
        if (task.pending_request_id !== null) {
          throw new ServerfsError("REQUEST_PENDING", "the task already has a pending request");
        }
        const to: TaskStatus = row.kind === "approval" ? "waiting_for_approval" : "waiting_for_question";
        assertTransition(task.status, to);
        this.db
          .query(
            `INSERT INTO interactions (request_id, task_id, kind, status, payload_json, created_at, expires_at, advice_json)
             VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)`,
          )
          .run(row.request_id, row.task_id, row.kind, row.payload_json, row.created_at, row.expires_at, row.advice_json);
        this.db
          .query("UPDATE tasks SET status = ?, pending_request_id = ?, updated_at = ? WHERE task_id = ?")
          .run(to, row.request_id, nowIso(), row.task_id);
        return this.require(row.task_id);
      })
      .immediate();
  }

  /** Close a pending request as resolved (or stale) and put the task back to running. */
  closeInteraction(requestId: string, outcome: "resolved" | "stale", resolution: unknown): TaskRow {
    return this.db
      .transaction(() => {
        this.beforeStatusWrite();
        this.writePendingCapabilities();
        const req = this.getInteraction(requestId);
        if (!req || req.status !== "pending") {
          throw new ServerfsError(
            req?.status === "resolved" ? "REQUEST_ALREADY_RESOLVED" : "REQUEST_STALE",
            "request is no longer pending",
          );
        }
        const task = this.require(req.task_id);
        if (task.pending_request_id !== requestId) throw new ServerfsError("REQUEST_STALE", "request is no longer pending");
        assertTransition(task.status, "running");
        const now = nowIso();
        this.db
          .query("UPDATE interactions SET status = ?, resolved_at = ?, resolution_json = ? WHERE request_id = ?")
          .run(outcome, now, resolution === undefined ? null : JSON.stringify(resolution), requestId);
        this.db
          .query("UPDATE tasks SET status = 'running', pending_request_id = NULL, updated_at = ? WHERE task_id = ?")
          .run(now, req.task_id);
        return this.require(req.task_id);
      })
      .immediate();
  }

  /**
   * docs/design/interactions.md: a request that had already expired when its waiter was created is kept for the record
   * as `stale` (never pending, never answerable); the task's status is not touched.
   */
  recordExpiredInteraction(row: InteractionRow): void {
    this.db
      .transaction(() => {
        this.db
          .query(
            `INSERT INTO interactions (request_id, task_id, kind, status, payload_json, created_at, expires_at, resolved_at, advice_json)
             VALUES (?, ?, ?, 'stale', ?, ?, ?, ?, ?)`,
          )
          .run(row.request_id, row.task_id, row.kind, row.payload_json, row.created_at, row.expires_at, nowIso(), row.advice_json);
      })
      .immediate();
  }

  pendingInteraction(taskId: string): InteractionRow | null {
    return (
      (this.db
        .query("SELECT * FROM interactions WHERE task_id = ? AND status = 'pending' ORDER BY created_at DESC LIMIT 1")
        .get(taskId) as InteractionRow | null) ?? null
    );
  }

  // Retention ----------------------------------------------------------------------------------

  /**
   * Terminal tasks completed before the cutoff. Runs before every submit and after every run, so it
   * reads only the expired rows, through tasks_by_completion (src/bridge/store/db.ts): by status
   * it read every finished task of the retention window (38 ms with 10,000 of them). The unary +
   * keeps the planner off the status index, which it would otherwise prefer.
   */
  expiredTerminal(cutoffIso: string): TaskRow[] {
    return this.db
      .query(EXPIRED_TERMINAL_SQL)
      .all(cutoffIso) as TaskRow[];
  }

  delete(taskIds: readonly string[]): void {
    if (taskIds.length === 0) return;
    this.db
      .transaction(() => {
        const del = this.db.query("DELETE FROM tasks WHERE task_id = ?");
        for (const id of taskIds) del.run(id);
      })
      .immediate();
  }

  // Capability snapshots (for adapters that measure their provider, e.g. ACP) ------------------

  getCapabilities(runtime: string, fingerprint: string): { snapshot: unknown; measured_at: string } | null {
    const pending = this.pendingCapabilities.get(runtime);
    if (pending !== undefined) {
      return pending.fingerprint === fingerprint ? { snapshot: JSON.parse(pending.json), measured_at: pending.measuredAt } : null;
    }
    const row = this.db
      .query("SELECT snapshot_json, measured_at FROM runtime_capabilities WHERE runtime = ? AND profile_fingerprint = ?")
      .get(runtime, fingerprint) as { snapshot_json: string; measured_at: string } | null;
    return row ? { snapshot: JSON.parse(row.snapshot_json), measured_at: row.measured_at } : null;
  }

  /**
   * Keep a measured snapshot. It is read back from memory at once and written with the store's
   * next commit (a status change, or an event flush within ~50 ms), not in a commit of its own:
   * one fsync less on every ACP task's path. A snapshot is a measurement the next task repeats, so
   * a crash before that commit loses nothing a caller was promised.
   */
  putCapabilities(runtime: string, fingerprint: string, snapshot: unknown): void {
    this.pendingCapabilities.set(runtime, { fingerprint, json: JSON.stringify(snapshot), measuredAt: nowIso() });
  }

  /** Inside a transaction: write the kept snapshots. One that cannot be written is dropped (re-measured next task). */
  writePendingCapabilities(): void {
    if (this.pendingCapabilities.size === 0) return;
    const pending = [...this.pendingCapabilities];
    this.pendingCapabilities.clear();
    for (const [runtime, snap] of pending) {
      try {
        // A savepoint of the caller's transaction: a failure here never fails the write it rides with.
        this.db.transaction(() => {
          // A snapshot for an older profile fingerprint no longer describes this runtime.
          this.db.query("DELETE FROM runtime_capabilities WHERE runtime = ?").run(runtime);
          this.db
            .query("INSERT INTO runtime_capabilities (runtime, profile_fingerprint, snapshot_json, measured_at) VALUES (?, ?, ?, ?)")
            .run(runtime, snap.fingerprint, snap.json, snap.measuredAt);
        })();
      } catch {
        // a measurement, not a record: the next task measures again
      }
    }
  }

  /** Write the kept snapshots now (at close). */
  flushCapabilities(): void {
    if (this.pendingCapabilities.size === 0) return;
    this.db.transaction(() => this.writePendingCapabilities()).immediate();
  }
}
