// Where one ACP task's time goes, cut into four phases that the bare ACP client and the Bridge
// both have, so each millisecond the Bridge adds can be placed. The cuts on our side are the
// Bridge's own records of the task, read back from its state database after the task (never
// during it); the bench's side is its own clock. Both are the machine's wall clock: the
// database's timestamps are ISO strings in whole milliseconds, so a phase is good to about a
// millisecond, and its median over a run to a fraction of one.
//
//   1. submit → run started:        serve's checks and its Bridge RPC, admission (writer lease,
//                                   task row and recovery guard made durable), up to the row's
//                                   started_at. Bare client: its spawn call.
//   2. run started → prompt sent:   the run's first commit, the contained spawn, the agent's own
//                                   start, initialize, session/new and the session id made
//                                   durable, up to the turn.started event. Bare client: spawn
//                                   returned → session/new answered.
//   3. prompt sent → result recorded: the turn, the agent's exit once its stdin is closed, the
//                                   stop proof, up to the task.completed event. Bare client:
//                                   prompt sent → the agent exited.
//   4. result recorded → client has it: the terminal commit, the release of lease and guard,
//                                   the waiting task.get woken and answered (through serve on the
//                                   MCP path). Bare client: nothing.
import { Database } from "bun:sqlite";
import { fmtMs, percentile } from "../lib/machine.ts";

export const PHASE_NAMES = [
  "submit → run started",
  "run started → prompt sent",
  "prompt sent → result recorded",
  "result recorded → client has it",
] as const;

export type Phases = [number, number, number, number];

/** The wall clock in milliseconds since the epoch, below a millisecond: the database's clock. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Reads a finished task's own records from a Bridge's state database (read-only). */
export class TaskRecords {
  private readonly db: Database;

  constructor(dbPath: string) {
    this.db = new Database(dbPath, { readonly: true });
  }

  /** The four phases of `taskId`, submitted at `submittedAt` and held by the client at `doneAt`; null when a record is missing. */
  phases(taskId: string, submittedAt: number, doneAt: number): Phases | null {
    const row = this.db.query("SELECT started_at FROM tasks WHERE task_id = ?").get(taskId) as { started_at: string | null } | null;
    const events = this.db
      .query("SELECT event_type, created_at FROM events WHERE task_id = ? AND event_type IN ('turn.started', 'task.completed')")
      .all(taskId) as { event_type: string; created_at: string }[];
    const at = (type: string) => {
      const e = events.find((x) => x.event_type === type);
      return e ? Date.parse(e.created_at) : Number.NaN;
    };
    const started = row?.started_at ? Date.parse(row.started_at) : Number.NaN;
    const prompt = at("turn.started");
    const recorded = at("task.completed");
    if (![started, prompt, recorded].every(Number.isFinite)) return null;
    return [started - submittedAt, prompt - started, recorded - prompt, doneAt - recorded];
  }

  close(): void {
    this.db.close();
  }
}

/** The medians of each phase for every path, and what the first path after the baseline adds to it. */
export function phaseTable(byPath: ReadonlyMap<string, readonly Phases[]>, baseline: string): string[] {
  const names = [...byPath.keys()];
  const median = (list: readonly Phases[], i: number) => percentile(list.map((p) => p[i]!).sort((a, b) => a - b), 50);
  const width = Math.max(...PHASE_NAMES.map((n) => n.length));
  const lines = [`where the time goes, p50 of each phase in ms (${names.join(" | ")}; then what ${names[1] ?? "ours"} adds):`];
  for (let i = 0; i < PHASE_NAMES.length; i++) {
    const cells = names.map((n) => fmtMs(median(byPath.get(n)!, i)).padStart(10));
    const base = median(byPath.get(baseline)!, i);
    const ours = names[1] === undefined ? base : median(byPath.get(names[1])!, i);
    const added = ours - base;
    lines.push(`  ${PHASE_NAMES[i]!.padEnd(width)} ${cells.join(" |")} | ${added >= 0 ? "+" : ""}${fmtMs(added)}`);
  }
  return lines;
}
