// Event ingest at synchronous=FULL: the Bridge's EventLog (queued, one transaction per ~50 ms
// flush tick) against one-insert-per-commit on the same schema and pragmas, in the same run.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStateDatabase } from "../../src/bridge/store/db.ts";
import { EventLog } from "../../src/bridge/store/events.ts";
import { TaskStore } from "../../src/bridge/store/tasks.ts";
import { machine } from "./common.ts";

const SECONDS = Number(process.env.SECONDS ?? 2);
const payload = JSON.stringify({ text: "compiling module 42 of 97", phase: "progress" });

function freshStore(): { store: TaskStore; dir: string; taskIds: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-evbench-"));
  const store = new TaskStore(openStateDatabase(path.join(dir, "bridge.sqlite3")));
  const taskIds: string[] = [];
  for (let i = 0; i < 16; i++) {
    const id = `agt_${i.toString(16).padStart(24, "0")}`;
    const now = new Date().toISOString();
    store.insert(
      {
        task_id: id, runtime: "fake", workdir_alias: "w", relative_cwd: "", profile: "review", created_at: now, updated_at: now,
        deadline_at: null, continue_from_task_id: null, correlation_id: null, idempotency_key: null, requested_model: null,
        request_fingerprint: null, manifest_json: null, manifest_sha256: null, run_id: null, native_session_id: null,
      },
      100,
    );
    taskIds.push(id);
  }
  return { store, dir, taskIds };
}

console.log(machine());

// Baseline: one INSERT per autocommit (each commit fsyncs).
{
  const { store, dir, taskIds } = freshStore();
  const ins = store.db.query("INSERT INTO events (task_id, event_type, payload_json, created_at) VALUES (?, ?, ?, ?)");
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    ins.run(taskIds[n % 16]!, "agent.message", payload, new Date().toISOString());
    n++;
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(`baseline one-insert-per-commit (WAL, synchronous=FULL): ${Math.round(n / secs)} events/s persisted (${n} in ${secs.toFixed(2)} s)`);
  store.db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

// The Bridge's EventLog: producers append as fast as they can; the flush tick commits batches.
{
  const { store, dir, taskIds } = freshStore();
  const log = new EventLog(store.db, Number.MAX_SAFE_INTEGER, 50);
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    for (let k = 0; k < 2000; k++) log.append(taskIds[n++ % 16]!, "agent.message", payload);
    // Yield to the event loop so the flush timer fires, as it does in the running Bridge.
    await new Promise((r) => setImmediate(r));
  }
  log.flush();
  const secs = (performance.now() - t0) / 1000;
  const persisted = (store.db.query("SELECT COUNT(*) AS c FROM events").get() as { c: number }).c;
  console.log(`EventLog batched per flush tick (WAL, synchronous=FULL): ${Math.round(persisted / secs)} events/s persisted (${persisted} in ${secs.toFixed(2)} s; target ≥ 20,000)`);
  store.db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
