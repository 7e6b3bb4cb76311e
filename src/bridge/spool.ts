// Large final responses live in a private spool file (docs/design/task-lifecycle.md#results): published atomically
// (platform/fs/atomic-file.ts), never over an existing spool file; read back in UTF-8-safe chunks whose concatenation
// reproduces the stored bytes exactly.
import fs from "node:fs";
import path from "node:path";
import { AtomicPublishError, publishFileAtomic } from "../../platform/fs/atomic-file.ts";
import { ServerfsError, errnoCode } from "../errors.ts";
import { privateToUser } from "../runtimes/kernel/provider-env.ts";

export const MAX_CHUNK_BYTES = 65_536;

function spoolFile(spoolDir: string, taskId: string): string {
  if (!/^agt_[0-9a-f]{24}$/.test(taskId)) throw new ServerfsError("AGENT_RESULT_STORAGE_ERROR", "invalid task id for spool");
  return path.join(spoolDir, `${taskId}.txt`);
}

/**
 * Publish a result's spool file. On a full filesystem (ENOSPC, or EDQUOT over a quota) the task's
 * partial file is already gone when this throws NO_SPACE_LEFT (publishFileAtomic removes its temp
 * file before it reports), so the space it took is free again for the database to record the
 * failure.
 */
export function writeSpool(spoolDir: string, taskId: string, bytes: Uint8Array): void {
  const target = spoolFile(spoolDir, taskId);
  try {
    fs.mkdirSync(spoolDir, { recursive: true, mode: 0o700 });
    const dst = fs.lstatSync(spoolDir);
    if (!dst.isDirectory() || (process.getuid && dst.uid !== process.getuid())) throw new Error("unsafe spool dir");
    publishFileAtomic(target, bytes, { mode: 0o600, createOnly: true });
  } catch (err) {
    const cause = err instanceof AtomicPublishError ? err.cause : err;
    const code = errnoCode(cause);
    if (code === "ENOSPC" || code === "EDQUOT") {
      throw new ServerfsError("NO_SPACE_LEFT", `the result (${bytes.byteLength} bytes) could not be spooled: the state directory's filesystem is full`);
    }
    throw new ServerfsError("AGENT_RESULT_STORAGE_ERROR", "result could not be stored");
  }
}

export function deleteSpool(spoolDir: string, taskId: string): void {
  try {
    fs.unlinkSync(spoolFile(spoolDir, taskId));
  } catch {
    // already gone
  }
}

export interface ResultChunk {
  text: string;
  offset_bytes: number;
  next_offset_bytes: number;
  eof: boolean;
}

function isContinuation(b: number): boolean {
  return (b & 0xc0) === 0x80;
}

export function readSpoolChunk(spoolDir: string, taskId: string, offset: number, maxBytes: number): ResultChunk {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_CHUNK_BYTES) {
    throw new ServerfsError("INVALID_RESULT_LIMIT", `max_bytes must be between 1 and ${MAX_CHUNK_BYTES}`);
  }
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ServerfsError("INVALID_RESULT_OFFSET", "offset_bytes must be ≥ 0");
  let fd: number;
  try {
    fd = fs.openSync(spoolFile(spoolDir, taskId), fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") throw new ServerfsError("AGENT_RESULT_NOT_RETRIEVABLE", "spooled result is gone");
    throw new ServerfsError("AGENT_RESULT_STORAGE_ERROR", "spooled result cannot be opened");
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || !privateToUser(st)) {
      throw new ServerfsError("AGENT_RESULT_STORAGE_ERROR", "spooled result is not a private regular file");
    }
    const size = st.size;
    if (offset > size) throw new ServerfsError("INVALID_RESULT_OFFSET", `offset_bytes ${offset} is beyond the result size`);
    // Read one byte more than asked so a chunk cut inside a character can be detected.
    const want = Math.min(maxBytes, size - offset);
    const buf = Buffer.alloc(want + 1);
    const got = want === 0 ? 0 : fs.readSync(fd, buf, 0, Math.min(want + 1, size - offset), offset);
    if (got > 0 && isContinuation(buf[0]!)) {
      throw new ServerfsError("INVALID_RESULT_OFFSET", "offset_bytes falls inside a UTF-8 character");
    }
    let end = Math.min(want, got);
    if (offset + end < size) {
      // The byte after the chunk must start a character; otherwise trim back to a boundary.
      while (end > 0 && isContinuation(buf[end]!)) end--;
      if (end === 0 && want > 0) {
        throw new ServerfsError("INVALID_RESULT_LIMIT", "max_bytes is too small for the next UTF-8 character");
      }
    }
    const next = offset + end;
    return { text: buf.subarray(0, end).toString("utf8"), offset_bytes: offset, next_offset_bytes: next, eof: next >= size };
  } finally {
    fs.closeSync(fd);
  }
}
