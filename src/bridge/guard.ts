// The persistent recovery guard (docs/design/lease-and-guard.md): one JSON file per workdir that exists
// while a provider may still be touching that workdir. It outlives crashes on purpose: only a
// proved provider stop removes it. The Bridge writes it; `serve` only reads it.
import fs from "node:fs";
import path from "node:path";
import { publishFileAtomic } from "../../platform/fs/atomic-file.ts";
import { ServerfsError, errnoCode } from "../errors.ts";
import { nowIso } from "./store/tasks.ts";

export interface GuardRecord {
  schema_version: 1;
  key: string;
  task_id: string;
  run_id: string | null;
  runtime: string;
  workdir_alias: string;
  correlation_id: string | null;
  native_session_id: string | null;
  native_turn_id: string | null;
  created_at: string;
  updated_at: string;
}

export type GuardState =
  | { state: "absent" }
  | { state: "present"; record: GuardRecord }
  /** Present but not a regular file, unreadable or not valid: fail closed. */
  | { state: "unsafe" };

export function readGuard(guardPath: string): GuardState {
  let fd: number;
  try {
    fd = fs.openSync(guardPath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return { state: "absent" };
    return { state: "unsafe" };
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return { state: "unsafe" };
    const text = fs.readFileSync(fd, "utf8");
    const value = JSON.parse(text) as Partial<GuardRecord>;
    if (value?.schema_version !== 1 || typeof value.task_id !== "string") return { state: "unsafe" };
    return { state: "present", record: value as GuardRecord };
  } catch {
    return { state: "unsafe" };
  } finally {
    fs.closeSync(fd);
  }
}

/** Create-only: an existing guard (of any kind) means the workdir needs recovery first. */
export function publishGuard(guardPath: string, record: Omit<GuardRecord, "schema_version" | "created_at" | "updated_at">): void {
  if (readGuard(guardPath).state !== "absent") {
    throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${record.workdir_alias} needs recovery before new writes`);
  }
  const now = nowIso();
  publishFileAtomic(guardPath, JSON.stringify({ schema_version: 1, ...record, created_at: now, updated_at: now }));
}

/** Record native ids in the guard of the task that owns it. */
export function updateGuard(guardPath: string, taskId: string, ids: { native_session_id: string | null; native_turn_id: string | null }): void {
  const cur = readGuard(guardPath);
  if (cur.state !== "present" || cur.record.task_id !== taskId) {
    throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", "recovery guard does not belong to this task");
  }
  publishFileAtomic(guardPath, JSON.stringify({ ...cur.record, ...ids, updated_at: nowIso() }));
}

/** Remove the guard only if it belongs to `taskId`. Returns whether it was removed. */
export function removeGuard(guardPath: string, taskId: string): boolean {
  const cur = readGuard(guardPath);
  if (cur.state !== "present" || cur.record.task_id !== taskId) return false;
  fs.unlinkSync(guardPath);
  return true;
}

/** Every guard file in the guard directory (names only; contents read with readGuard). */
export function listGuards(guardDir: string): string[] {
  try {
    return fs
      .readdirSync(guardDir)
      .filter((n) => !n.startsWith("."))
      .map((n) => path.join(guardDir, n));
  } catch {
    return [];
  }
}
