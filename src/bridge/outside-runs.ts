// Processes the Bridge process starts outside any task — runtime probes (`probe-<uuid>`) and model
// discovery (`models-<uuid>`) — are not task rows, so restart reconciliation (which sweeps task run
// markers) would never look for them. This journal writes each such run id to
// `<state>/outside-runs/` before the spawn (fsynced) and deletes it once the process's containment
// set was proved stopped. The Bridge installs it into the platform containment
// (platform/index.ts installSpawnJournal), so every spawn through `containment()` is covered without
// the spawning code knowing; at start, records left by an earlier Bridge instance are swept with
// the platform's exact-run-id sweep and removed only with proof.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { RUN_ID_PATTERN } from "../../platform/env.ts";
import type { SpawnJournal } from "../../platform/types.ts";
import { fsyncDirectory, isAtomicTempName, publishFileAtomic } from "../../platform/fs/atomic-file.ts";
import { ServerfsError } from "../errors.ts";
import { sha256Hex } from "./ids.ts";
import { ensurePrivateDir } from "./lease.ts";
import { nowIso } from "./store/tasks.ts";

/** A task's run marker (swept by task reconciliation, never journaled). */
export const TASK_RUN_ID_PATTERN = /^run_[0-9a-f]{24}$/;

export function taskRunId(taskId: string): string {
  return `run_${taskId.slice(4)}`;
}

export interface OutsideRunRecord {
  run_id: string;
  bridge_instance: string;
  bridge_pid: number;
  created_at: string;
}

export interface OutsideRunLeftover {
  runId: string;
  file: string;
}

export class OutsideRunJournal implements SpawnJournal {
  /** This Bridge instance: its own records are never swept by its own start. */
  readonly instance = crypto.randomUUID();

  constructor(readonly dir: string) {
    ensurePrivateDir(dir, "STATE_DIRECTORY_UNSAFE");
  }

  private fileFor(runId: string): string {
    return path.join(this.dir, `${sha256Hex(runId).slice(0, 40)}.json`);
  }

  record(runId: string): void {
    if (TASK_RUN_ID_PATTERN.test(runId) || !RUN_ID_PATTERN.test(runId)) return;
    const rec: OutsideRunRecord = { run_id: runId, bridge_instance: this.instance, bridge_pid: process.pid, created_at: nowIso() };
    try {
      publishFileAtomic(this.fileFor(runId), JSON.stringify(rec), { mode: 0o600 });
    } catch {
      // Unrecorded, a crash would leave the process unfindable: refuse the spawn instead.
      throw new ServerfsError("IO_ERROR", "could not record a process started outside a task");
    }
  }

  clear(runId: string): void {
    try {
      fs.unlinkSync(this.fileFor(runId));
      fsyncDirectory(this.dir);
    } catch {
      // already gone, or never recorded (a task run id)
    }
  }

  /**
   * Records of earlier Bridge instances. A record is written completely before its spawn, so an
   * unreadable or partial file (a crash during `record`) names no process and is removed here.
   */
  leftovers(): OutsideRunLeftover[] {
    const out: OutsideRunLeftover[] = [];
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return out;
    }
    for (const name of names) {
      const file = path.join(this.dir, name);
      // A temp file names no process (a record is published completely before its spawn), and
      // record() is synchronous, so none of this instance's own can be in flight here.
      if (isAtomicTempName(name) || name.endsWith(".tmp")) {
        this.unlink(file);
        continue;
      }
      if (!/^[0-9a-f]{40}\.json$/.test(name)) continue;
      let rec: Partial<OutsideRunRecord> | null = null;
      try {
        const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
        try {
          if (fs.fstatSync(fd).isFile()) rec = JSON.parse(fs.readFileSync(fd, "utf8")) as Partial<OutsideRunRecord>;
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        rec = null;
      }
      if (!rec || typeof rec.run_id !== "string" || !RUN_ID_PATTERN.test(rec.run_id) || file !== this.fileFor(rec.run_id)) {
        this.unlink(file);
        continue;
      }
      if (rec.bridge_instance === this.instance) continue;
      out.push({ runId: rec.run_id, file });
    }
    return out;
  }

  /** Remove swept records (called only after the sweep proved them stopped). */
  remove(leftovers: readonly OutsideRunLeftover[]): void {
    for (const l of leftovers) this.unlink(l.file);
    if (leftovers.length > 0) fsyncDirectory(this.dir);
  }

  private unlink(file: string): void {
    try {
      fs.unlinkSync(file);
    } catch {
      // gone
    }
  }
}
