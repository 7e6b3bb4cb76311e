// Which Bridge state writes share a commit (each commit is an fsync under synchronous=FULL): a
// measured capability snapshot is read back from memory at once and written with the store's next
// commit, a status change or an event flush; several writes nobody can see between are one
// commit, all or nothing. Observed through a second connection to the same database file, as
// `serverfs doctor` reads it.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import path from "node:path";
import { openStateDatabase } from "../../src/bridge/store/db.ts";
import { EventLog } from "../../src/bridge/store/events.ts";
import { TaskStore, type NewTask } from "../../src/bridge/store/tasks.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function stores(): { store: TaskStore; events: EventLog; other: Database; close(): void } {
  const root = tempDir();
  dirs.push(root);
  const file = path.join(root, "bridge.sqlite3");
  const db = openStateDatabase(file);
  const store = new TaskStore(db);
  const events = new EventLog(db, 1000);
  // As the Bridge wires them (src/bridge/service/core.ts).
  store.beforeStatusWrite = () => events.flush();
  events.alsoWrite = () => store.writePendingCapabilities();
  const other = new Database(file, { readonly: true });
  return {
    store,
    events,
    other,
    close() {
      other.close();
      db.close();
    },
  };
}

function task(id: string): NewTask {
  const now = new Date().toISOString();
  return {
    task_id: id,
    runtime: "acp-x",
    workdir_alias: "repo",
    relative_cwd: "",
    profile: "review",
    created_at: now,
    updated_at: now,
    deadline_at: null,
    continue_from_task_id: null,
    correlation_id: null,
    idempotency_key: null,
    requested_model: null,
    request_fingerprint: null,
    manifest_json: null,
    manifest_sha256: null,
    run_id: null,
    native_session_id: null,
  };
}

const storedSnapshots = (db: Database) => db.query("SELECT runtime, profile_fingerprint, snapshot_json FROM runtime_capabilities").all();

describe("a capability snapshot rides with the next commit", () => {
  test("read back at once; on disk with the next status change, with its measured_at", () => {
    const s = stores();
    try {
      s.store.insert(task("agt_a"), 16);
      s.store.putCapabilities("acp-x", "fp1", { agent_name: "x" });
      const kept = s.store.getCapabilities("acp-x", "fp1")!;
      expect(kept.snapshot).toEqual({ agent_name: "x" });
      expect(s.store.getCapabilities("acp-x", "fp-other")).toBeNull();
      expect(storedSnapshots(s.other)).toEqual([]);
      s.store.transition("agt_a", "starting");
      expect(storedSnapshots(s.other)).toEqual([{ runtime: "acp-x", profile_fingerprint: "fp1", snapshot_json: '{"agent_name":"x"}' }]);
      expect(s.store.getCapabilities("acp-x", "fp1")).toEqual(kept);
    } finally {
      s.close();
    }
  });

  test("or with the next event flush; a newer fingerprint replaces the runtime's older one", () => {
    const s = stores();
    try {
      s.store.insert(task("agt_b"), 16);
      s.store.putCapabilities("acp-x", "fp1", { v: 1 });
      s.store.flushCapabilities();
      s.store.putCapabilities("acp-x", "fp2", { v: 2 });
      expect(s.store.getCapabilities("acp-x", "fp1")).toBeNull();
      s.events.append("agt_b", "agent.message", '{"text":"hi"}');
      s.events.flush();
      expect(storedSnapshots(s.other)).toEqual([{ runtime: "acp-x", profile_fingerprint: "fp2", snapshot_json: '{"v":2}' }]);
    } finally {
      s.close();
    }
  });

  test("one that cannot be written is dropped and never fails the status change it rode with", () => {
    const s = stores();
    try {
      s.store.insert(task("agt_c"), 16);
      s.store.db.exec("CREATE TRIGGER refuse BEFORE INSERT ON runtime_capabilities BEGIN SELECT RAISE(ABORT, 'refused'); END");
      s.store.putCapabilities("acp-x", "fp1", { v: 1 });
      expect(s.store.transition("agt_c", "starting").status).toBe("starting");
      expect((s.other.query("SELECT status FROM tasks WHERE task_id = 'agt_c'").get() as { status: string }).status).toBe("starting");
      expect(storedSnapshots(s.other)).toEqual([]);
      expect(s.store.getCapabilities("acp-x", "fp1")).toBeNull();
    } finally {
      s.close();
    }
  });
});

describe("writes nobody can see between are one commit", () => {
  test("both steps land together, or neither does", () => {
    const s = stores();
    try {
      s.store.insert(task("agt_d"), 16);
      s.store.together(() => {
        s.store.transition("agt_d", "starting", {}, ["queued"]);
        expect((s.other.query("SELECT status FROM tasks WHERE task_id = 'agt_d'").get() as { status: string }).status).toBe("queued");
        s.store.transition("agt_d", "running", {}, ["starting"]);
      });
      expect((s.other.query("SELECT status, started_at FROM tasks WHERE task_id = 'agt_d'").get() as { status: string; started_at: string | null }).status).toBe("running");
      s.store.insert(task("agt_e"), 16);
      expect(() =>
        s.store.together(() => {
          s.store.transition("agt_e", "starting", {}, ["queued"]);
          s.store.transition("agt_e", "running", {}, ["queued"]);
        }),
      ).toThrow(expect.objectContaining({ code: "INVALID_TASK_TRANSITION" }));
      expect((s.other.query("SELECT status, started_at FROM tasks WHERE task_id = 'agt_e'").get() as { status: string; started_at: string | null })).toEqual({ status: "queued", started_at: null });
    } finally {
      s.close();
    }
  });
});
