// Reading the Bridge database without touching it. SQLite offers no mode that is both read-only
// on disk and sees the WAL: `mode=ro` still writes the `-shm` index (and creates `-wal`/`-shm`
// when they are missing), and `immutable=1` ignores the WAL, so rows written just before a crash
// would be invisible. The doctor therefore copies the database and its WAL into a private
// temporary directory (0700, outside the state dir), opens the copy there, and deletes it.
// Files are opened with O_NOFOLLOW: a symlink planted in the state dir is never followed.
import { Database } from "bun:sqlite";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { errnoCode } from "../errors.ts";
import { removeTree } from "../../platform/fs/remove-tree.ts";

export interface StateSnapshot {
  integrity: string[];
  userVersion: number;
  /** Task rows by id: only what the doctor reports. */
  task(taskId: string): { task_id: string; status: string; runtime: string; workdir_alias: string; run_id: string | null } | null;
  capabilityRows(runtime: string): Array<{ profile_fingerprint: string; snapshot_json: string; measured_at: string }>;
  close(): void;
}

export type SnapshotOutcome =
  | { kind: "absent" }
  | { kind: "unreadable"; why: string }
  | { kind: "ok"; snapshot: StateSnapshot };

function readNoFollow(file: string): Buffer | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    throw err;
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error("not a regular file"), { code: "EINVAL" });
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function hasTable(db: Database, name: string): boolean {
  return db.query("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== null;
}

export function openStateSnapshot(dbPath: string): SnapshotOutcome {
  let main: Buffer | null;
  let wal: Buffer | null;
  try {
    main = readNoFollow(dbPath);
    if (main === null) return { kind: "absent" };
    wal = readNoFollow(`${dbPath}-wal`);
  } catch (err) {
    return { kind: "unreadable", why: `cannot be read (${errnoCode(err) ?? "error"})` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-doctor-db-"));
  fs.chmodSync(dir, 0o700);
  const copy = path.join(dir, "bridge.sqlite3");
  let db: Database | null = null;
  try {
    fs.writeFileSync(copy, main, { mode: 0o600 });
    if (wal !== null && wal.length > 0) fs.writeFileSync(`${copy}-wal`, wal, { mode: 0o600 });
    db = new Database(copy, { readwrite: true, create: false, strict: true });
    const integrity = (db.query("PRAGMA integrity_check").all() as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
    const userVersion = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    const opened = db;
    const tasks = hasTable(opened, "tasks");
    const caps = hasTable(opened, "runtime_capabilities");
    const hasRunId = tasks && opened.query("SELECT 1 AS x FROM pragma_table_info('tasks') WHERE name = 'run_id'").get() !== null;
    return {
      kind: "ok",
      snapshot: {
        integrity,
        userVersion,
        task(taskId) {
          if (!tasks) return null;
          const cols = `task_id, status, runtime, workdir_alias, ${hasRunId ? "run_id" : "NULL AS run_id"}`;
          return (opened.query(`SELECT ${cols} FROM tasks WHERE task_id = ?`).get(taskId) as ReturnType<StateSnapshot["task"]>) ?? null;
        },
        capabilityRows(runtime) {
          if (!caps) return [];
          return opened
            .query("SELECT profile_fingerprint, snapshot_json, measured_at FROM runtime_capabilities WHERE runtime = ?")
            .all(runtime) as Array<{ profile_fingerprint: string; snapshot_json: string; measured_at: string }>;
        },
        close() {
          opened.close();
          removeTree(dir);
        },
      },
    };
  } catch {
    db?.close();
    removeTree(dir);
    return { kind: "unreadable", why: "is not a readable SQLite database" };
  }
}
