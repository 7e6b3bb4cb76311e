// Event persistence: appends are queued and written in one transaction per flush tick (~50 ms),
// which keeps synchronous=FULL durable and fast. Readers and status writes flush first, so an
// event is always visible before the status change it explains.
import type { Database } from "bun:sqlite";
import { ServerfsError } from "../../errors.ts";
import { nowIso } from "./tasks.ts";

export interface EventRecord {
  schema_version: 1;
  event_id: number;
  task_id: string;
  correlation_id: string | null;
  event_type: string;
  payload: Record<string, unknown>;
  created_at: string;
}

/** The newest event of a task: what a silent task last recorded, and when. */
export interface LastEvent {
  event_type: string;
  created_at: string;
}

interface Queued {
  taskId: string;
  type: string;
  json: string;
  createdAt: string;
}

export class EventLog {
  private queue: Queued[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Event counts of tasks that may still append (the rows hold the truth; this saves a read per event). */
  private readonly counts = new Map<string, number>();
  /** Called after each flush with the task ids that got new events (wakes long-polls). */
  onFlushed: (taskIds: Set<string>) => void = () => {};
  /** Called inside each flush's transaction: other writes that wait for the next commit ride with it. */
  alsoWrite: () => void = () => {};

  constructor(
    private readonly db: Database,
    private readonly maxPerTask: number,
    private readonly flushMs = 50,
  ) {}

  /** Queue one event whose payload JSON is already bounded. Throws AGENT_EVENT_LIMIT_REACHED at the cap. */
  append(taskId: string, type: string, payloadJson: string): void {
    const n = this.count(taskId);
    if (n >= this.maxPerTask) {
      throw new ServerfsError("AGENT_EVENT_LIMIT_REACHED", `a task may record at most ${this.maxPerTask} events`);
    }
    this.counts.set(taskId, n + 1);
    this.queue.push({ taskId, type, json: payloadJson, createdAt: nowIso() });
    if (this.timer === null) this.timer = setTimeout(() => this.flush(), this.flushMs);
  }

  private count(taskId: string): number {
    let n = this.counts.get(taskId);
    if (n === undefined) {
      const row = this.db.query("SELECT event_count FROM tasks WHERE task_id = ?").get(taskId) as {
        event_count: number;
      } | null;
      n = row?.event_count ?? 0;
      this.counts.set(taskId, n);
    }
    return n;
  }

  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const touched = new Set<string>();
    const perTask = new Map<string, number>();
    const write = () => {
      const ins = this.db.query(
        "INSERT INTO events (task_id, event_type, payload_json, created_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM tasks WHERE task_id = ?)",
      );
      for (const e of batch) {
        ins.run(e.taskId, e.type, e.json, e.createdAt, e.taskId);
        touched.add(e.taskId);
        perTask.set(e.taskId, (perTask.get(e.taskId) ?? 0) + 1);
      }
      const upd = this.db.query("UPDATE tasks SET event_count = event_count + ? WHERE task_id = ?");
      for (const [id, k] of perTask) upd.run(k, id);
      this.alsoWrite();
    };
    if (this.db.inTransaction) write();
    else this.db.transaction(write).immediate();
    this.onFlushed(touched);
  }

  read(taskId: string, afterEventId: number, limit: number, correlationId: string | null): EventRecord[] {
    this.flush();
    const rows = this.db
      .query(
        "SELECT event_id, event_type, payload_json, created_at FROM events WHERE task_id = ? AND event_id > ? ORDER BY event_id LIMIT ?",
      )
      .all(taskId, afterEventId, limit) as { event_id: number; event_type: string; payload_json: string; created_at: string }[];
    return rows.map((r) => ({
      schema_version: 1,
      event_id: r.event_id,
      task_id: taskId,
      correlation_id: correlationId,
      event_type: r.event_type,
      payload: JSON.parse(r.payload_json) as Record<string, unknown>,
      created_at: r.created_at,
    }));
  }

  /**
   * A task's newest event, queued or written. The queue is searched from its end (it holds at most
   * one flush tick of events), so no read ever forces a flush of other tasks' events.
   */
  last(taskId: string): LastEvent | null {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const e = this.queue[i]!;
      if (e.taskId === taskId) return { event_type: e.type, created_at: e.createdAt };
    }
    const row = this.db
      .query("SELECT event_type, created_at FROM events WHERE task_id = ? ORDER BY event_id DESC LIMIT 1")
      .get(taskId) as LastEvent | null;
    return row ?? null;
  }

  /** The payload of a task's newest event of one type, queued or written (e.g. its latest usage). */
  lastOfType(taskId: string, type: string): { payload: Record<string, unknown>; created_at: string } | null {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const e = this.queue[i]!;
      if (e.taskId === taskId && e.type === type) return { payload: JSON.parse(e.json) as Record<string, unknown>, created_at: e.createdAt };
    }
    const row = this.db
      .query("SELECT payload_json, created_at FROM events WHERE task_id = ? AND event_type = ? ORDER BY event_id DESC LIMIT 1")
      .get(taskId, type) as { payload_json: string; created_at: string } | null;
    return row ? { payload: JSON.parse(row.payload_json) as Record<string, unknown>, created_at: row.created_at } : null;
  }

  /** Drop a task's cached count. Flush first: a count read back later must include queued events. */
  forget(taskId: string): void {
    this.counts.delete(taskId);
  }

  /** How many tasks have a cached count (bounded by the tasks still running). */
  get trackedTasks(): number {
    return this.counts.size;
  }

  close(): void {
    this.flush();
  }
}
