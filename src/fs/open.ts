// Opening a request path as a regular file for content, type checked BEFORE any content open:
// the final component is first opened as an object (no follow), fstat'ed, and only a regular file
// is re-opened for reading through that same descriptor. A FIFO, socket or device is never
// opened for I/O, so nothing blocks and no device side effect happens.

import fs, { type BigIntStats } from "node:fs";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail, openFailure, type OpenPurpose } from "./fail.ts";
import type { OpenKind } from "../../platform/fs/native.ts";

export interface OpenedFile {
  fd: number;
  st: BigIntStats;
}

/** Classify a non-regular object for the content channels (read, edit, delete, download, overwrite). */
export function refuseNonRegular(st: BigIntStats, t: Target): void {
  if (st.isFile()) return;
  if (st.isDirectory()) throw fail("NOT_A_FILE", t.alias, t.rel);
  if (st.isSymbolicLink()) throw fail("SYMLINK_NOT_ALLOWED", t.alias, t.rel);
  throw fail("UNSUPPORTED_FILE_TYPE", t.alias, t.rel);
}

/** openBeneath, with a failure reported against the request path `t` for `purpose`. */
export function openAt(ws: Workspace, t: Target, dirFd: number, parts: readonly string[], kind: OpenKind, purpose: OpenPurpose): number {
  try {
    return ws.native.openBeneath(dirFd, parts, kind);
  } catch (err) {
    throw openFailure(err, t.alias, t.rel, purpose);
  }
}

/** Open the object at `t` (no follow) and return its descriptor and lstat-like stats. */
export function openObject(ws: Workspace, t: Target, purpose: OpenPurpose): OpenedFile {
  const fd = openAt(ws, t, ws.rootFd(t), t.parts, "object", purpose);
  try {
    return { fd, st: fs.fstatSync(fd, { bigint: true }) };
  } catch (err) {
    closeQuietly(fd);
    throw openFailure(err, t.alias, t.rel, purpose);
  }
}

/**
 * A workdir with refuse_hardlinked_reads: whoever can write in the workdir can link in a file
 * from elsewhere on the same filesystem, and nothing on the link says where its other name is,
 * so the content of any multiply-linked file is not served.
 */
export function refuseHardlinkedRead(st: BigIntStats, t: Target): void {
  if (t.wd.workdir.refuse_hardlinked_reads && st.nlink > 1n) {
    throw fail("MULTIPLE_HARDLINKS_NOT_SUPPORTED", t.alias, t.rel, "file has more than one hard link, and this workdir does not read such files");
  }
}

export function openRegularForRead(ws: Workspace, t: Target, purpose: OpenPurpose): OpenedFile {
  const obj = openObject(ws, t, purpose);
  try {
    refuseNonRegular(obj.st, t);
    if (purpose === "read") refuseHardlinkedRead(obj.st, t);
    let fd: number;
    try {
      fd = ws.native.reopenForRead(obj.fd);
    } catch (err) {
      throw openFailure(err, t.alias, t.rel, purpose);
    }
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      if (st.ino !== obj.st.ino || st.dev !== obj.st.dev || !st.isFile()) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
      return { fd, st };
    } catch (err) {
      closeQuietly(fd);
      throw openFailure(err, t.alias, t.rel, purpose);
    }
  } finally {
    closeQuietly(obj.fd);
  }
}

/** pread until `buf` is full or EOF; returns bytes read. */
export function readFully(fd: number, buf: Uint8Array, position: number): number {
  let got = 0;
  while (got < buf.length) {
    const n = fs.readSync(fd, buf, got, buf.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got;
}
