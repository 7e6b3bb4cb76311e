// The queries every submit and every finished run make of the state database read what they
// need, not the retention window: with thousands of finished tasks (a week of them is the
// default), retention's look for expired tasks reads only the expired rows, and the active-task
// count reads only active ones. The index that makes that possible is not a migration: the
// database's schema version stays, so an older serverfs still opens it.
import { afterAll, describe, expect, test } from "bun:test";
import path from "node:path";
import { openStateDatabase } from "../../src/bridge/store/db.ts";
import { MIGRATIONS } from "../../src/bridge/store/migrations.ts";
import { COUNT_ACTIVE_SQL, EXPIRED_TERMINAL_SQL, TaskStore } from "../../src/bridge/store/tasks.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function storeWithHistory(finished: number): { store: TaskStore; close(): void; file: string } {
  const root = tempDir();
  dirs.push(root);
  const file = path.join(root, "bridge.sqlite3");
  const db = openStateDatabase(file);
  const insert = db.query(
    "INSERT INTO tasks (task_id, runtime, workdir_alias, relative_cwd, profile, status, created_at, updated_at, completed_at) VALUES (?, 'acp-x', 'repo', '', 'review', ?, ?, ?, ?)",
  );
  db.transaction(() => {
    for (let i = 0; i < finished; i++) {
      const at = new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString();
      insert.run(`agt_done_${i}`, i % 2 ? "succeeded" : "failed", at, at, at);
    }
    insert.run("agt_old_1", "succeeded", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z");
    insert.run("agt_old_2", "cancelled", "2026-01-02T00:00:00.000Z", "2026-01-02T00:00:00.000Z", "2026-01-02T00:00:01.000Z");
    insert.run("agt_live", "running", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", null);
  })();
  return { store: new TaskStore(db), file, close: () => db.close() };
}

const plan = (store: TaskStore, sql: string, ...args: string[]) =>
  (store.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join("; ");

describe("retention and admission queries", () => {
  test("expired tasks come from the completion index, exactly the expired finished ones", () => {
    const s = storeWithHistory(2000);
    try {
      const cutoff = "2026-06-01T00:00:00.000Z";
      expect(s.store.expiredTerminal(cutoff).map((t) => t.task_id).sort()).toEqual(["agt_old_1", "agt_old_2"]);
      expect(s.store.expiredTerminal("2026-01-01T12:00:00.000Z").map((t) => t.task_id)).toEqual(["agt_old_1"]);
      const detail = plan(s.store, EXPIRED_TERMINAL_SQL, cutoff);
      expect(detail).toContain("USING INDEX tasks_by_completion");
    } finally {
      s.close();
    }
  });

  test("the active-task count seeks the active statuses instead of reading every finished task", () => {
    const s = storeWithHistory(2000);
    try {
      expect(s.store.countActive()).toBe(1);
      const detail = plan(s.store, COUNT_ACTIVE_SQL);
      expect(detail).toContain("SEARCH tasks USING COVERING INDEX tasks_by_status");
      expect(detail).not.toContain("SCAN");
    } finally {
      s.close();
    }
  });

  test("the index leaves the schema version alone, and opening again keeps one copy of it", () => {
    const s = storeWithHistory(0);
    s.close();
    const again = openStateDatabase(s.file);
    try {
      expect((again.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(MIGRATIONS.length);
      expect(again.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'tasks_by_completion'").all()).toHaveLength(1);
    } finally {
      again.close();
    }
  });
});
