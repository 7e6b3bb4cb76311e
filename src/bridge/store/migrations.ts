// Additive schema steps, applied in order and keyed by PRAGMA user_version. Never edit a step
// that has shipped; append a new one. Step N brings the database to user_version N.

export const MIGRATIONS: readonly string[] = [
  // 1: tasks, events, interactions, idempotency keys.
  `
  CREATE TABLE tasks (
    task_id TEXT PRIMARY KEY,
    runtime TEXT NOT NULL,
    workdir_alias TEXT NOT NULL,
    relative_cwd TEXT NOT NULL,
    profile TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at TEXT,
    updated_at TEXT NOT NULL,
    completed_at TEXT,
    error_code TEXT,
    error_message TEXT,
    final_response TEXT,
    result_storage TEXT,
    result_size_bytes INTEGER,
    result_sha256 TEXT,
    native_session_id TEXT,
    native_turn_id TEXT,
    pending_request_id TEXT
  );
  CREATE TABLE events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    event_type TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX events_by_task ON events(task_id, event_id);
  CREATE TABLE interactions (
    request_id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(task_id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    resolved_at TEXT,
    resolution_json TEXT
  );
  CREATE INDEX interactions_by_task ON interactions(task_id);
  `,
  // 2: deadlines, correlation, immutable manifest, run marker, idempotency table, capability snapshots.
  `
  ALTER TABLE tasks ADD COLUMN deadline_at TEXT;
  ALTER TABLE tasks ADD COLUMN continue_from_task_id TEXT;
  ALTER TABLE tasks ADD COLUMN correlation_id TEXT;
  ALTER TABLE tasks ADD COLUMN idempotency_key TEXT;
  ALTER TABLE tasks ADD COLUMN requested_model TEXT;
  ALTER TABLE tasks ADD COLUMN request_fingerprint TEXT;
  ALTER TABLE tasks ADD COLUMN manifest_json TEXT;
  ALTER TABLE tasks ADD COLUMN manifest_sha256 TEXT;
  ALTER TABLE tasks ADD COLUMN run_id TEXT;
  ALTER TABLE tasks ADD COLUMN provider_started INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE tasks ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE interactions ADD COLUMN expires_at TEXT;
  CREATE INDEX tasks_by_status ON tasks(status);
  CREATE INDEX tasks_by_created ON tasks(created_at);
  CREATE TABLE idempotency (
    idempotency_key TEXT PRIMARY KEY,
    task_id TEXT NOT NULL UNIQUE REFERENCES tasks(task_id) ON DELETE CASCADE,
    request_fingerprint TEXT NOT NULL
  );
  CREATE TABLE runtime_capabilities (
    runtime TEXT NOT NULL,
    profile_fingerprint TEXT NOT NULL,
    snapshot_json TEXT NOT NULL,
    measured_at TEXT NOT NULL,
    PRIMARY KEY (runtime, profile_fingerprint)
  );
  `,
  // 3: the advice each interaction carried (src/bridge/service/advice.ts), kept beside its resolution.
  `
  ALTER TABLE interactions ADD COLUMN advice_json TEXT;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;
