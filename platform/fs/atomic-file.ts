// The one way serverfs publishes a private file of its own (rendered config, recovery guards,
// spooled results, the spawn journal): a temp file created exclusively beside the target
// (O_CREAT|O_EXCL|O_NOFOLLOW, so nothing already there is reused or followed), every byte
// written (short writes loop), fsynced (F_FULLFSYNC on macOS: durable-sync.ts), renamed over the
// target, then the directory fsynced so the rename itself survives a crash. Readers see the old
// bytes or the new, never a mix; on any failure the temp file is removed and the target is untouched.
//
// Temp names start with "." and carry `.serverfs-tmp-`, so directory scans that skip dot files
// (guards) or match exact names (journal, spool) never mistake one for a published file.
// Workdir files are published elsewhere (src/fs/publish.ts), relative to verified descriptors.
// It lives in platform/ because the service installers (unit files, plists, task XML) use it too,
// and platform/ imports nothing from src/.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { IS_WINDOWS } from "../os.ts";
import { durableSync } from "./durable-sync.ts";

export type AtomicPublishFailure =
  /** The target is a symbolic link: refused, never followed or replaced. */
  | "target_symlink"
  /** The target exists and is not a regular file. */
  | "target_not_regular"
  /** `createOnly` and the target already exists. */
  | "target_exists"
  | "target_uninspectable"
  | "directory_missing"
  | "directory_not_writable"
  | "temp_create_failed"
  | "write_failed";

/**
 * Why a publish failed, as a reason callers map to their own error code. Carries no path; a
 * write failure keeps the system error as `cause`, so a caller can tell a full disk (ENOSPC).
 */
export class AtomicPublishError extends Error {
  override readonly name = "AtomicPublishError";
  constructor(
    readonly reason: AtomicPublishFailure,
    cause?: unknown,
  ) {
    super(`atomic publish failed: ${reason}`, cause === undefined ? undefined : { cause });
  }
}

export interface AtomicPublishOptions {
  /** File mode of the published file; default 0600. */
  mode?: number;
  /** Let the process umask narrow `mode`, as for a file the user asked for (default: exact mode). */
  applyUmask?: boolean;
  /** Refuse when the target already exists, atomically (link(2), which never replaces). */
  createOnly?: boolean;
}

const TEMP_MARK = ".serverfs-tmp-";

/** Whether a directory entry is one of our in-flight temp files (for scans that must skip them). */
export function isAtomicTempName(name: string): boolean {
  return name.startsWith(".") && name.includes(TEMP_MARK);
}

export function publishFileAtomic(target: string, content: string | Uint8Array, options: AtomicPublishOptions = {}): void {
  const mode = options.mode ?? 0o600;
  inspectTarget(target, options.createOnly === true);
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}${TEMP_MARK}${randomBytes(6).toString("hex")}`);
  let fd: number;
  try {
    fd = fs.openSync(temp, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0), mode);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new AtomicPublishError("directory_missing");
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new AtomicPublishError("directory_not_writable");
    throw new AtomicPublishError("temp_create_failed");
  }
  try {
    try {
      const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      writeAll(fd, bytes);
      // The umask may have narrowed the create mode; the published mode is exactly `mode`.
      if (!IS_WINDOWS && options.applyUmask !== true) fs.fchmodSync(fd, mode);
      durableSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (options.createOnly === true) publishNoReplace(temp, target);
    else fs.renameSync(temp, target);
  } catch (err) {
    removeQuietly(temp);
    if (err instanceof AtomicPublishError) throw err;
    throw new AtomicPublishError("write_failed", err);
  }
  fsyncDirectory(dir);
}

/** Every byte, looping over short writes. */
export function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.byteLength) off += fs.writeSync(fd, bytes, off, bytes.byteLength - off);
}

/**
 * Make a directory entry change (rename, unlink) durable. Best effort: some filesystems refuse to
 * fsync a directory, and Windows cannot open one this way; the file data itself is already synced.
 */
export function fsyncDirectory(dir: string): void {
  if (IS_WINDOWS) return;
  try {
    const dfd = fs.openSync(dir, fs.constants.O_RDONLY);
    try {
      durableSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  } catch {
    // see above: best effort
  }
}

function inspectTarget(target: string, createOnly: boolean): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(target);
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return;
    throw new AtomicPublishError("target_uninspectable");
  }
  if (st.isSymbolicLink()) throw new AtomicPublishError("target_symlink");
  if (createOnly) throw new AtomicPublishError("target_exists");
  if (!st.isFile()) throw new AtomicPublishError("target_not_regular");
}

/**
 * link(2) publishes the temp file's inode under the target name only if that name is free; the
 * temp name is then dropped. A filesystem without hard links (vfat, some network mounts) gets a
 * checked rename instead, which is atomic against readers but not against a racing creator.
 */
function publishNoReplace(temp: string, target: string): void {
  try {
    fs.linkSync(temp, target);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "EEXIST") throw new AtomicPublishError("target_exists");
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw err;
    if (exists(target)) throw new AtomicPublishError("target_exists");
    fs.renameSync(temp, target);
    return;
  }
  removeQuietly(temp);
}

/** Whether anything (a symlink included, not followed) is at `p`. */
export function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function removeQuietly(p: string): void {
  try {
    fs.unlinkSync(p);
  } catch {
    // already gone (renamed, or never created)
  }
}
