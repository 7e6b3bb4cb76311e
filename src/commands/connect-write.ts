// `connect --write`: read the host's configuration file, let the editor compute the new text,
// then publish it. Every refusal happens before anything is written. Then, in order: a backup of
// the old bytes beside the file (created exclusively, never replacing anything), and the new
// text published atomically over the file (temp file in the same directory, fsync, rename,
// directory fsync: platform/fs/atomic-file.ts), with the file's own permission bits.
import fs from "node:fs";
import path from "node:path";
import { AtomicPublishError, exists, fsyncDirectory, publishFileAtomic } from "../../platform/fs/atomic-file.ts";
import { errnoCode, ServerfsError } from "../errors.ts";
import type { HostFile } from "./connect-hosts.ts";

/** Larger than any host configuration file; a file beyond it is not read. */
const MAX_CONFIG_BYTES = 64 * 1024 * 1024;

export interface WriteOutcome {
  created: boolean;
  replaced: boolean;
  /** How messages name the backup, when one was written. */
  backupLabel: string | null;
}

/** Computes the new text from the current one (null: no file yet); throws a coded error to refuse. */
export type TextEditor = (current: string | null) => { text: string; replaced: boolean };

export function writeHostConfig(file: HostFile, editor: TextEditor, now: Date = new Date()): WriteOutcome {
  const existing = readCurrent(file);
  const { text, replaced } = editor(existing === null ? null : existing.text);
  if (existing === null) {
    createDirectories(file, path.dirname(file.path));
    publish(file, text, { mode: 0o600, createOnly: true });
    return { created: true, replaced: false, backupLabel: null };
  }
  // The host may rewrite its own file at any time (Claude Code does); an edit of bytes that are
  // no longer there would undo that write.
  const again = readCurrent(file);
  if (again === null || !again.bytes.equals(existing.bytes)) {
    throw new ServerfsError("HOST_CONFIG_UNEDITABLE", `${file.label}: changed while serverfs was editing it; nothing was written, run the command again`);
  }
  const backup = writeBackup(file, existing.bytes, existing.mode, now);
  publish(file, text, { mode: existing.mode });
  return { created: false, replaced, backupLabel: backup };
}

interface Current {
  bytes: Buffer;
  text: string;
  mode: number;
}

function readCurrent(file: HostFile): Current | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file.path);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return null;
    if (errnoCode(err) === "ENOTDIR") throw io(file, "a part of its directory is not a directory");
    throw io(file, "cannot be inspected");
  }
  if (st.isSymbolicLink()) {
    throw new ServerfsError("HOST_CONFIG_UNEDITABLE", `${file.label}: is a symbolic link, which serverfs does not replace; pass the file it points to with --file; nothing was written`);
  }
  if (!st.isFile()) throw new ServerfsError("HOST_CONFIG_UNEDITABLE", `${file.label}: is not a regular file; nothing was written`);
  if (st.size > MAX_CONFIG_BYTES) throw new ServerfsError("HOST_CONFIG_INVALID", `${file.label}: is larger than 64 MiB; nothing was written`);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file.path);
  } catch {
    throw io(file, "cannot be read");
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ServerfsError("HOST_CONFIG_INVALID", `${file.label}: is not UTF-8 text; nothing was written`);
  }
  return { bytes, text, mode: st.mode & 0o777 };
}

function io(file: HostFile, why: string): ServerfsError {
  return new ServerfsError("IO_ERROR", `${file.label}: ${why}; nothing was written`);
}

/** The missing directories of a new file, made private to the user, each made durable. */
function createDirectories(file: HostFile, dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !exists(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if (errnoCode(err) !== "EEXIST") throw io(file, "its directory cannot be created");
    }
    fsyncDirectory(path.dirname(d));
  }
}

const WHY: Record<string, string> = {
  target_symlink: "is a symbolic link, which serverfs does not replace",
  target_not_regular: "is not a regular file",
  target_exists: "appeared while serverfs was writing it; run the command again",
  target_uninspectable: "cannot be inspected",
  directory_missing: "its directory does not exist",
  directory_not_writable: "its directory is not writable",
  temp_create_failed: "a temporary file beside it cannot be created",
  write_failed: "writing it failed",
};

function publish(file: HostFile, text: string, options: { mode: number; createOnly?: boolean }): void {
  try {
    publishFileAtomic(file.path, text, options);
  } catch (err) {
    const reason = err instanceof AtomicPublishError ? err.reason : "write_failed";
    const code = reason === "target_symlink" || reason === "target_not_regular" || reason === "target_exists" ? "HOST_CONFIG_UNEDITABLE" : "IO_ERROR";
    throw new ServerfsError(code, `${file.label}: ${WHY[reason]}; the file is unchanged`);
  }
}

/** `<file>.serverfs-backup-20261201T101500Z` (a `-2`, `-3`... suffix if that name is taken). */
function writeBackup(file: HostFile, bytes: Buffer, mode: number, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  for (let n = 1; n < 100; n++) {
    const suffix = `.serverfs-backup-${stamp}${n === 1 ? "" : `-${n}`}`;
    try {
      publishFileAtomic(file.path + suffix, bytes, { mode, createOnly: true });
      return file.label + suffix;
    } catch (err) {
      if (err instanceof AtomicPublishError && (err.reason === "target_exists" || err.reason === "target_symlink")) continue;
      const reason = err instanceof AtomicPublishError ? err.reason : "write_failed";
      throw new ServerfsError("IO_ERROR", `${file.label}: its backup cannot be written (${WHY[reason]}); the file is unchanged`);
    }
  }
  throw new ServerfsError("IO_ERROR", `${file.label}: no free backup name; the file is unchanged`);
}
