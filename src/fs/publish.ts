// Publication of new bytes. Both paths write a reserved temp (named for its owner, ./temp-name.ts;
// created O_CREAT|O_EXCL|O_NOFOLLOW in the verified parent, after that directory was swept of dead
// writers' temps, ./temp-sweep.ts), fsync it, then publish by NAME relative to the parent
// descriptor, and remove the temp on every failure path:
// - publishNew: hard-link temp → name, which can never overwrite anything (EEXIST → PATH_ALREADY_EXISTS).
// - publishReplace: copy owner, then mode WITHOUT setuid/setgid, then extended attributes,
//   re-check the target's revision at the last moment, then rename temp over name. New content is
//   not what was marked privileged: the kernel clears both bits when an unprivileged process
//   writes a file, and serve (often root, so the kernel would not) does the same on purpose.
// Where the backend has publishFd (Windows), both steps are one rename of the temp's own handle,
// refusing or allowing replacement, instead of a link or rename by name.
// Revisions are taken from fstat of the published inode AFTER publication.

import fs, { type BigIntStats } from "node:fs";
import { errnoCode, ServerfsError } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { lockDirectories, type HeldLocks } from "./dir-lock.ts";
import { fail, faultFailure, mutationFailure, openFailure } from "./fail.ts";
import { openAt, refuseNonRegular } from "./open.ts";
import { revisionOf } from "./revision.ts";
import { tempName } from "./temp-name.ts";
import { sweepBeforeWrite } from "./temp-sweep.ts";

/** Open the parent directory of a mutation target as a base for *at calls. */
export function openParent(ws: Workspace, t: Target, purpose: "create" | "mutate"): { fd: number; name: string } {
  const name = t.parts[t.parts.length - 1] as string;
  return { fd: openAt(ws, t, ws.rootFd(t), t.parts.slice(0, -1), "dirBase", purpose), name };
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
}

interface TempFile {
  fd: number;
  name: string;
}

function createTemp(ws: Workspace, t: Target, parentFd: number): TempFile {
  // First, what dead writers left here: on a full disk their space is what this write needs.
  sweepBeforeWrite(ws, parentFd);
  for (let attempt = 0; ; attempt++) {
    const name = tempName();
    try {
      return { fd: ws.native.openBeneath(parentFd, [name], "createExclusive", 0o666), name };
    } catch (err) {
      if (errnoCode(err) === "EEXIST" && attempt < 4) continue;
      throw mutationFailure(err, t.alias, t.rel);
    }
  }
}

function removeTemp(ws: Workspace, parentFd: number, tmp: TempFile): void {
  closeQuietly(tmp.fd);
  try {
    ws.native.unlinkAt(parentFd, tmp.name, false);
  } catch {
    // already gone (published by rename) or the directory vanished
  }
}

/**
 * The revision of what was just published, from its own descriptor. The change is made by now, so
 * a failure here must not say "nothing was changed": it says the change stands and how to learn
 * its revision.
 */
export function publishedRevision(t: Target, fd: number): string {
  try {
    return revisionOf(fs.fstatSync(fd, { bigint: true }));
  } catch {
    throw fail("IO_ERROR", t.alias, t.rel, "the change was made, but its new revision could not be read; call stat_file for it");
  }
}

/** fsync the directory so the new name is durable; a failure here is not the caller's problem. */
export function syncDirectory(ws: Workspace, parentFd: number): void {
  try {
    const fd = ws.native.openBeneath(parentFd, [], "dirList");
    try {
      ws.native.fsync(fd);
    } finally {
      closeQuietly(fd);
    }
  } catch {
    // logged by nobody on purpose: the data itself is already fsynced
  }
}

/** Create `name` with `bytes`; never overwrites. Returns the revision of the published file. */
export function publishNew(ws: Workspace, t: Target, bytes: Uint8Array): { revision: string } {
  const parent = openParent(ws, t, "create");
  try {
    const tmp = createTemp(ws, t, parent.fd);
    try {
      try {
        writeAll(tmp.fd, bytes);
        ws.native.fsync(tmp.fd);
      } catch (err) {
        throw mutationFailure(err, t.alias, t.rel);
      }
      try {
        if (ws.native.publishFd) ws.native.publishFd(tmp.fd, parent.fd, parent.name, false);
        else ws.native.linkAt(parent.fd, tmp.name, parent.name);
      } catch (err) {
        if (errnoCode(err) === "EEXIST") throw fail("PATH_ALREADY_EXISTS", t.alias, t.rel);
        throw mutationFailure(err, t.alias, t.rel);
      }
      try {
        if (!ws.native.publishFd) ws.native.unlinkAt(parent.fd, tmp.name, false);
      } catch {
        // removeTemp below retries; the published name is already complete
      }
      const revision = publishedRevision(t, tmp.fd);
      syncDirectory(ws, parent.fd);
      return { revision };
    } finally {
      removeTemp(ws, parent.fd, tmp);
    }
  } finally {
    closeQuietly(parent.fd);
  }
}

/** Permission bits and sticky; setuid (0o4000) and setgid (0o2000) never survive new content. */
const PRESERVED_MODE_BITS = 0o1777;

function copyMetadata(ws: Workspace, sourceFd: number, source: BigIntStats, tmpFd: number): void {
  ws.native.fchown(tmpFd, Number(source.uid), Number(source.gid));
  ws.native.fchmod(tmpFd, Number(source.mode) & PRESERVED_MODE_BITS);
  let attrs = new Map<string, Buffer>();
  try {
    attrs = ws.native.listXattrs(sourceFd);
  } catch (err) {
    // a filesystem without xattr support has nothing to preserve
    if (errnoCode(err) !== "ENOTSUP" && errnoCode(err) !== "EOPNOTSUPP") throw err;
  }
  for (const [name, value] of attrs) if (ws.native.preservesXattr(name)) ws.native.setXattr(tmpFd, name, value);
  ws.native.copyAcl?.(sourceFd, tmpFd);
}

/**
 * Replace the regular file `parentFd/name` (already opened as `source` and revision-checked by
 * the caller) with `bytes`, preserving its metadata. `expected` is the revision the caller
 * verified; it is checked again immediately before the rename.
 */
export function publishReplace(
  ws: Workspace,
  t: Target,
  parent: { fd: number; name: string },
  /** Closed (fd set to -1) before the rename; callers' later closeQuietly is then a no-op. */
  source: { fd: number; st: BigIntStats },
  expected: string,
  bytes: Uint8Array,
): { revision: string } {
  const tmp = createTemp(ws, t, parent.fd);
  let renamed = false;
  try {
    try {
      writeAll(tmp.fd, bytes);
    } catch (err) {
      throw mutationFailure(err, t.alias, t.rel);
    }
    try {
      copyMetadata(ws, source.fd, source.st, tmp.fd);
    } catch (err) {
      if (err instanceof ServerfsError) throw err;
      // A full disk refuses an extended attribute too: that is the answer, not "metadata".
      throw faultFailure(err, t.alias, t.rel, true) ?? fail("METADATA_PRESERVATION_FAILED", t.alias, t.rel);
    }
    try {
      ws.native.fsync(tmp.fd);
    } catch (err) {
      throw mutationFailure(err, t.alias, t.rel);
    }
    assertUnchangedAt(ws, t, parent, expected, "file");
    // A Windows file that is still open cannot be replaced without POSIX rename semantics (Windows
    // before 10 1709, Wine): nothing below reads the source, so its descriptor is closed first.
    closeQuietly(source.fd);
    source.fd = -1;
    try {
      if (ws.native.publishFd) ws.native.publishFd(tmp.fd, parent.fd, parent.name, true);
      else ws.native.renameAt(parent.fd, tmp.name, parent.name);
      renamed = true;
    } catch (err) {
      throw mutationFailure(err, t.alias, t.rel);
    }
    const revision = publishedRevision(t, tmp.fd);
    syncDirectory(ws, parent.fd);
    return { revision };
  } finally {
    if (renamed) closeQuietly(tmp.fd);
    else removeTemp(ws, parent.fd, tmp);
  }
}

/**
 * The last-moment check before a destructive step (rename over, unlink): the name in the parent
 * must still carry the revision the caller verified, else REVISION_CONFLICT and nothing changes.
 */
export function assertUnchangedAt(ws: Workspace, t: Target, parent: { fd: number; name: string }, revision: string, what: "file" | "directory"): void {
  let current: string;
  try {
    current = revisionOf(ws.native.lstatChild(parent.fd, parent.name));
  } catch (err) {
    if (errnoCode(err) === "ENOENT") throw fail("REVISION_CONFLICT", t.alias, t.rel, `${what} was removed meanwhile`);
    throw mutationFailure(err, t.alias, t.rel);
  }
  if (current !== revision) throw fail("REVISION_CONFLICT", t.alias, t.rel);
}

/**
 * Run `fn` on the existing regular file at `t`, opened through its verified parent, once its
 * revision matches `expectedRevision` (and, for a replacement, once it has a single link: a new
 * inode renamed over one name would silently split it from its other names). With `lock`, the
 * parent's writers' lock (dir-lock.ts) is held from before the revision check until `fn` settles,
 * so no other serverfs writer changes the name in between. Both descriptors are closed when `fn`
 * settles.
 */
export async function withExistingFile<R>(
  ws: Workspace,
  t: Target,
  expectedRevision: string,
  refuseHardlinks: boolean,
  fn: (parent: { fd: number; name: string }, source: { fd: number; st: BigIntStats }, revision: string) => R | Promise<R>,
  options: { lock: boolean },
): Promise<R> {
  const parent = openParent(ws, t, "mutate");
  let locks: HeldLocks | null = null;
  try {
    if (options.lock) locks = await lockDirectories(ws, t, [parent.fd]);
    const source = openExistingFile(ws, t, parent.fd);
    try {
      const revision = revisionOf(source.st);
      if (revision !== expectedRevision) throw fail("REVISION_CONFLICT", t.alias, t.rel);
      if (refuseHardlinks && source.st.nlink > 1n) throw fail("MULTIPLE_HARDLINKS_NOT_SUPPORTED", t.alias, t.rel);
      return await fn(parent, source, revision);
    } finally {
      closeQuietly(source.fd);
    }
  } finally {
    locks?.release();
    closeQuietly(parent.fd);
  }
}

/** Open an existing target for replacement/deletion through its verified parent, type before revision. */
export function openExistingFile(ws: Workspace, t: Target, parentFd: number): { fd: number; st: BigIntStats } {
  const obj = openAt(ws, t, parentFd, [t.parts[t.parts.length - 1] as string], "object", "mutate");
  try {
    const st = fs.fstatSync(obj, { bigint: true });
    refuseNonRegular(st, t);
    let fd: number;
    try {
      fd = ws.native.reopenForRead(obj);
    } catch (err) {
      throw openFailure(err, t.alias, t.rel, "mutate");
    }
    const st2 = fs.fstatSync(fd, { bigint: true });
    if (st2.ino !== st.ino || st2.dev !== st.dev) {
      closeQuietly(fd);
      throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
    }
    return { fd, st: st2 };
  } finally {
    closeQuietly(obj);
  }
}
