// Opening the Bridge state database: pragmas in the order that works (busy_timeout before WAL),
// additive migrations inside BEGIN IMMEDIATE, and refusal of a database newer than this binary.
import { Database } from "bun:sqlite";
import fs from "node:fs";
import { ServerfsError } from "../../errors.ts";
import { IS_DARWIN } from "../../../platform/os.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.ts";

function userVersion(db: Database): number {
  const row = db.query("PRAGMA user_version").get() as { user_version: number };
  return row.user_version;
}

export function migrate(db: Database, migrations: readonly string[] = MIGRATIONS): void {
  const target = migrations.length;
  const current = userVersion(db);
  if (current > target) {
    throw new ServerfsError(
      "STATE_DATABASE_TOO_NEW",
      `state database schema ${current} is newer than this serverfs (${target}); upgrade serverfs`,
    );
  }
  for (let step = current; step < target; step++) {
    db.transaction(() => {
      // Re-check inside the write lock: another starter may have migrated meanwhile.
      if (userVersion(db) !== step) return;
      db.exec(migrations[step]!);
      db.exec(`PRAGMA user_version = ${step + 1}`);
    }).immediate();
  }
}

/**
 * Indexes that change no row or column: not migrations, so a database that has them still opens
 * in an older serverfs (a migration would make it refuse the file as too new).
 */
export function ensureIndexes(db: Database): void {
  // Retention looks for finished tasks past the cutoff before every submit and after every run.
  db.exec("CREATE INDEX IF NOT EXISTS tasks_by_completion ON tasks(completed_at) WHERE completed_at IS NOT NULL");
}

export function openStateDatabase(dbPath: string): Database {
  const fd = fs.openSync(dbPath, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
  const st = fs.fstatSync(fd);
  fs.closeSync(fd);
  if (!st.isFile() || (process.getuid && st.uid !== process.getuid())) {
    throw new ServerfsError("STATE_DIRECTORY_UNSAFE", "state database is not a private regular file");
  }
  fs.chmodSync(dbPath, 0o600);
  const db = new Database(dbPath, { create: true, strict: true });
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
  // macOS fsync does not flush the drive's cache: F_FULLFSYNC for every sync, checkpoints included
  // (fullfsync already covers them; checkpoint_fullfsync says so explicitly).
  if (IS_DARWIN) {
    db.exec("PRAGMA fullfsync = ON");
    db.exec("PRAGMA checkpoint_fullfsync = ON");
  }
  try {
    migrate(db);
    ensureIndexes(db);
  } catch (err) {
    db.close();
    throw err;
  }
  for (const suffix of ["-wal", "-shm"]) {
    try {
      fs.chmodSync(dbPath + suffix, 0o600);
    } catch {
      // not created yet
    }
  }
  return db;
}

export { SCHEMA_VERSION };
