// Windows backend: every request path is walked ONE component at a time, each NtCreateFile
// relative to the previous component's handle (OBJECT_ATTRIBUTES.RootDirectory) with
// FILE_OPEN_REPARSE_POINT, so the object manager never parses a path string of ours and no
// symlink, junction or mount point is ever followed: each component's attributes are read on its
// own handle and any name-surrogate reparse point in the walk is refused (a symlink as ELOOP, like
// Linux; a junction or mount point as REPARSE_POINT_NOT_ALLOWED). A final name-surrogate opened as
// a request's object is ELOOP too (SYMLINK_NOT_ALLOWED: never read or edited as the empty file
// libuv's fstat would make of it); lstatChild opens it as itself and reports it as a symlink, from
// its reparse tag. A reparse point that is not a name-surrogate (a OneDrive placeholder, a dedup
// or WOF-compressed file) is the file it marks and is served as such.
// Since every volume mount point is a reparse point, no walk ever leaves the root's volume:
// cross_mounts = false needs no extra check here.
// Handles become node:fs descriptors (platform/fs/windows.ts, toFd), so content, fstat (volume
// serial + file index as dev/ino, which src/fs re-verifies) and close stay shared with Linux.
// FILE_OPEN_FOR_BACKUP_INTENT is never passed: NT opens directories without it, and with an
// enabled backup privilege it would bypass the DACL, silently widening what serve may touch.

import fs from "node:fs";
import { lockDirectoryWindows } from "./dir-lock-windows.ts";
import type { DirEntryInfo, FsNative, OpenKind } from "./native-types.ts";
import { looksLikeShortName } from "./windows-names.ts";
import * as nt from "./windows.ts";
import { selectInSteps } from "./dir-select.ts";
import { copySecurity } from "./windows-security.ts";

const { A, OPT, DISP } = nt;

const STEP = { access: A.TRAVERSE | A.READ_ATTRIBUTES, options: OPT.DIRECTORY_FILE };
const KINDS: Record<OpenKind, { access: number; options: number; disposition: number }> = {
  object: { access: A.READ_ATTRIBUTES, options: 0, disposition: DISP.OPEN },
  dirBase: { access: A.TRAVERSE | A.READ_ATTRIBUTES, options: OPT.DIRECTORY_FILE, disposition: DISP.OPEN },
  dirList: { access: A.READ_DATA | A.TRAVERSE | A.READ_ATTRIBUTES, options: OPT.DIRECTORY_FILE, disposition: DISP.OPEN },
  read: { access: A.READ_DATA | A.READ_ATTRIBUTES | A.READ_EA | A.READ_CONTROL, options: OPT.NON_DIRECTORY_FILE, disposition: DISP.OPEN },
  // DELETE: the temp is renamed onto its final name; WRITE_DAC: the replaced file's DACL is copied on.
  createExclusive: {
    access: A.WRITE_DATA | A.APPEND_DATA | A.WRITE_ATTRIBUTES | A.WRITE_EA | A.READ_ATTRIBUTES | A.READ_CONTROL | A.WRITE_DAC | A.DELETE,
    options: OPT.NON_DIRECTORY_FILE,
    disposition: DISP.CREATE,
  },
};

/** The handle's attributes and reparse tag; a handle that cannot report them is closed. */
function attributeTagOrClose(h: bigint): { attributes: number; tag: number } {
  try {
    return nt.attributeTag(h);
  } catch (err) {
    nt.ntClose(h);
    throw err;
  }
}

/**
 * How a final component that is a name-surrogate (symlink, junction, mount point) is treated:
 * "refuse" like any component; "asLink" opens it as the link itself (lstatChild, which reports it
 * as a symlink; unlink and rename, which act on the link).
 */
type FinalLink = "refuse" | "asLink";

/**
 * Refuse (closing it) a handle that is a name-surrogate reparse point, unless `final` is "asLink".
 * A reparse point of any other tag (OneDrive placeholder, dedup, WOF) is the file it marks and
 * passes. Refusals: a symlink is ELOOP (SYMLINK_NOT_ALLOWED, like Linux), and so is any
 * name-surrogate opened as the final object of a request (reading or editing it); a junction or
 * mount point on the way is REPARSE_POINT_NOT_ALLOWED.
 */
function refuseReparse(h: bigint, final: FinalLink | "object"): void {
  const tag = attributeTagOrClose(h);
  if ((tag.attributes & nt.ATTR_REPARSE_POINT) === 0 || !nt.isNameSurrogate(tag.tag)) return;
  if (final === "asLink") return;
  nt.ntClose(h);
  if (tag.tag === nt.TAG_SYMLINK || final === "object") throw new nt.NtError("ELOOP", 0x8000002d, "NtCreateFile");
  throw new nt.ReparsePointError("NtCreateFile");
}

/**
 * A component in 8.3 shape (`ENVPRO~1`) may name a file whose long name (`.env.production`) the
 * policy denies, and the policy only ever saw the short spelling: such a component must be the
 * file's own long name, or the open is refused. Under Wine every component is compared, since
 * there a differing name means a Unix symlink was followed (platform/fs/windows.ts, underWine).
 */
function refuseAlias(h: bigint, name: string): void {
  const shortShape = looksLikeShortName(name);
  if (!shortShape && !nt.underWine()) return;
  let stored: string;
  try {
    stored = nt.storedName(h);
  } catch (err) {
    nt.ntClose(h);
    throw err;
  }
  if (stored.toUpperCase() === name.toUpperCase()) return;
  nt.ntClose(h);
  if (shortShape) throw new nt.ShortNameError("NtCreateFile");
  throw new nt.NtError("ELOOP", 0x8000002d, "NtCreateFile");
}

function openOne(base: bigint, name: string, access: number, options: number, disposition: number, final: FinalLink | "object"): bigint {
  const h = nt.ntOpen(base, name, access, disposition, options | OPT.OPEN_REPARSE_POINT, disposition === DISP.CREATE ? 0x80 : 0);
  if (disposition === DISP.CREATE) return h;
  refuseReparse(h, final);
  refuseAlias(h, name);
  return h;
}

function openHandle(dirfd: number, parts: readonly string[], kind: OpenKind): bigint {
  const base = nt.handleOf(dirfd);
  const k = KINDS[kind];
  // "" relative to a handle reopens that same object: no name is looked up at all
  if (parts.length === 0) return nt.ntOpen(base, "", k.access, DISP.OPEN, k.options | OPT.OPEN_REPARSE_POINT);
  let cur = base;
  try {
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      const name = parts[i] as string;
      const next = last ? openOne(cur, name, k.access, k.options, k.disposition, kind === "object" ? "object" : "refuse") : openOne(cur, name, STEP.access, STEP.options, DISP.OPEN, "refuse");
      if (cur !== base) nt.ntClose(cur);
      cur = next;
    }
    return cur;
  } catch (err) {
    if (cur !== base) nt.ntClose(cur);
    throw err;
  }
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // nothing to do
  }
}

/** Run `fn` on a handle opened for one mutation of `name` beneath `dirFd`, closed afterwards. */
function withChild<T>(dirFd: number, name: string, access: number, options: number, fn: (h: bigint, base: bigint) => T): T {
  const base = nt.handleOf(dirFd);
  const h = openOne(base, name, access | A.READ_ATTRIBUTES, options, DISP.OPEN, "asLink");
  try {
    return fn(h, base);
  } finally {
    nt.ntClose(h);
  }
}

/** A name-surrogate (symlink, junction) is listed as a symlink; any other reparse point as what it marks. */
/**
 * Descriptors beneath a root opened with showOsHidden (RootOptions): every open of the backend
 * rewrites its descriptor's entry, so a reused number never inherits a stale choice, and a
 * descriptor the backend did not open is never in it: OS-hidden entries are left out by default.
 */
const showsOsHidden = new Set<number>();
function mark(fd: number, shows: boolean): number {
  if (shows) showsOsHidden.add(fd);
  else showsOsHidden.delete(fd);
  return fd;
}

/** FILE_ATTRIBUTE_HIDDEN and FILE_ATTRIBUTE_SYSTEM: what Explorer and `dir` leave out. */
const OS_HIDDEN = 0x2 | 0x4;
function listed(dirFd: number, e: nt.NtDirEntry): boolean {
  if (e.name === "." || e.name === "..") return false;
  return (e.attributes & OS_HIDDEN) === 0 || showsOsHidden.has(dirFd);
}

function kindOf(e: nt.NtDirEntry): DirEntryInfo["kind"] {
  if ((e.attributes & nt.ATTR_REPARSE_POINT) !== 0 && nt.isNameSurrogate(e.tag)) return "symlink";
  return (e.attributes & nt.ATTR_DIRECTORY) !== 0 ? "directory" : "file";
}

const S_IFMT = 0o170000n;
const S_IFLNK = 0o120000n;
const STAT_FIELDS = ["dev", "ino", "nlink", "uid", "gid", "rdev", "size", "blksize", "blocks", "atimeMs", "mtimeMs", "ctimeMs", "birthtimeMs", "atimeNs", "mtimeNs", "ctimeNs", "birthtimeNs", "atime", "mtime", "ctime", "birthtime"] as const;

/** `st` (fstat of a link opened as itself) as lstat reports a symlink: S_IFLNK, neither file nor directory. */
function linkStats(st: fs.BigIntStats): fs.BigIntStats {
  const out: Record<string, unknown> = {};
  for (const k of STAT_FIELDS) out[k] = st[k];
  out.mode = (st.mode & ~S_IFMT) | S_IFLNK;
  const no = () => false;
  Object.assign(out, { isFile: no, isDirectory: no, isBlockDevice: no, isCharacterDevice: no, isFIFO: no, isSocket: no, isSymbolicLink: () => true });
  return out as unknown as fs.BigIntStats;
}

export const windowsNative: FsNative = {
  openRoot(hostPath, opts) {
    // as a directory (FILE_DIRECTORY_FILE): a file root fails with NOT_A_DIRECTORY, so ENOTDIR
    const h = nt.openPathNoFollow(hostPath, A.READ_DATA | A.TRAVERSE | A.READ_ATTRIBUTES, OPT.DIRECTORY_FILE);
    const tag = attributeTagOrClose(h);
    // the root is the trusted anchor: it must be a real directory, not a link to one
    if ((tag.attributes & nt.ATTR_REPARSE_POINT) !== 0) {
      nt.ntClose(h);
      throw new nt.NtError("ELOOP", 0x8000002d, "NtCreateFile");
    }
    if ((tag.attributes & nt.ATTR_DIRECTORY) === 0) {
      nt.ntClose(h);
      throw new nt.NtError("ENOTDIR", 0xc0000103, "NtCreateFile");
    }
    return mark(nt.toFd(h), opts?.showOsHidden === true);
  },

  openBeneath(dirfd, parts, kind) {
    return mark(nt.toFd(openHandle(dirfd, parts, kind)), showsOsHidden.has(dirfd));
  },

  reopenForRead(objectFd) {
    // The same object, by handle: the caller re-verifies dev/ino (volume serial + file index).
    // A non-surrogate reparse point (cloud placeholder, dedup, WOF) is reopened with its reparse
    // point processed, so its filter serves the file's real content; a surrogate never gets here
    // (the object open refused it), and one swapped in since reaches another file, which the
    // dev/ino check refuses.
    const h = nt.handleOf(objectFd);
    const tag = nt.attributeTag(h);
    const follow = (tag.attributes & nt.ATTR_REPARSE_POINT) !== 0 && !nt.isNameSurrogate(tag.tag);
    return nt.toFd(nt.ntOpen(h, "", KINDS.read.access, DISP.OPEN, KINDS.read.options | (follow ? 0 : OPT.OPEN_REPARSE_POINT)));
  },

  readDir(dirFd) {
    const h = nt.handleOf(dirFd);
    const buf = new Uint8Array(64 * 1024);
    const out: DirEntryInfo[] = [];
    for (let batch = nt.queryDirectory(h, buf, true); batch !== null; batch = nt.queryDirectory(h, buf, false)) {
      // every entry, OS-hidden ones too: delete_directory's emptiness check reads this
      for (const e of batch) if (e.name !== "." && e.name !== "..") out.push({ name: e.name, kind: kindOf(e) });
    }
    return out;
  },

  readDirSmallest(dirFd, k, keep) {
    // NtQueryDirectoryFile already streams: each 64 KiB batch is one chunk of the bounded selection.
    const h = nt.handleOf(dirFd);
    const buf = new Uint8Array(64 * 1024);
    let first = true;
    return selectInSteps(k, (name) => keep === undefined || keep(name), (push) => {
      const batch = nt.queryDirectory(h, buf, first);
      first = false;
      if (batch === null) return false;
      for (const e of batch) if (listed(dirFd, e)) push(e.name, kindOf(e));
      return true;
    });
  },

  lstatChild(dirFd, name) {
    const h = openOne(nt.handleOf(dirFd), name, KINDS.object.access, 0, DISP.OPEN, "asLink");
    let tag: { attributes: number; tag: number };
    try {
      tag = nt.attributeTag(h);
    } catch (err) {
      nt.ntClose(h);
      throw err;
    }
    const fd = nt.toFd(h);
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      // libuv's fstat never reports S_IFLNK: a name-surrogate is typed from its reparse tag
      return (tag.attributes & nt.ATTR_REPARSE_POINT) !== 0 && nt.isNameSurrogate(tag.tag) ? linkStats(st) : st;
    } finally {
      closeQuietly(fd);
    }
  },

  // Publication without overwrite: a rename that refuses to replace is as atomic as link+unlink and
  // works on volumes without hard links. A hard link would also leave the temp's name behind as
  // "delete pending" while its handle is open (and nlink at 2), so the revision would be wrong.
  linkAt(dirFd, oldName, newName) {
    withChild(dirFd, oldName, A.DELETE, OPT.NON_DIRECTORY_FILE, (h, base) => nt.renameHandle(h, base, newName, false));
  },
  renameAt(dirFd, oldName, newName) {
    withChild(dirFd, oldName, A.DELETE, OPT.NON_DIRECTORY_FILE, (h, base) => nt.renameHandle(h, base, newName, true));
  },
  // The source's own handle is renamed, with RootDirectory = the held destination directory and
  // no replace: NTFS refuses an existing name (OBJECT_NAME_COLLISION → EEXIST) under its own lock.
  // Options 0 open a file or a directory; "refuse" refuses any name-surrogate, a symlink
  // included, so a link is never what moves.
  renameNoReplace(srcDirFd, srcName, dstDirFd, dstName) {
    const h = openOne(nt.handleOf(srcDirFd), srcName, A.DELETE | A.READ_ATTRIBUTES, 0, DISP.OPEN, "refuse");
    try {
      nt.renameHandle(h, nt.handleOf(dstDirFd), dstName, false);
    } finally {
      nt.ntClose(h);
    }
  },
  unlinkAt(dirFd, name, isDir) {
    withChild(dirFd, name, A.DELETE, isDir ? OPT.DIRECTORY_FILE : OPT.NON_DIRECTORY_FILE, (h) => nt.deleteHandle(h));
  },
  // Through the handle that was written: no by-name reopen of the temp (another local process could
  // have swapped that name), and Wine keeps the handle's own path current only for the handle that
  // renamed it (fstat through a handle renamed by another one reports volume serial 0 there).
  publishFd(fd, dirFd, newName, replace) {
    nt.renameHandle(nt.handleOf(fd), nt.handleOf(dirFd), newName, replace);
  },
  mkdirAt(dirFd, name) {
    // no mode: the new directory inherits its parent's DACL, which is what umask stands for here
    nt.ntClose(nt.ntOpen(nt.handleOf(dirFd), name, A.READ_ATTRIBUTES, DISP.CREATE, OPT.DIRECTORY_FILE | OPT.OPEN_REPARSE_POINT));
  },
  // Windows has no mode bits or uid/gid to copy (fstat synthesises them); copyAcl carries the
  // attributes, the DACL and the owner instead.
  fchmod() {},
  fchown() {},
  listXattrs: () => new Map(),
  setXattr() {
    throw new nt.NtError("ENOTSUP", 0xc00000bb, "setXattr");
  },
  fsync(fd) {
    nt.flush(nt.handleOf(fd));
  },
  closeFast: closeQuietly,
  preservesXattr: () => false,
  tryLockDirectory: lockDirectoryWindows,
  copyAcl(fromFd, toFd) {
    copySecurity(nt.handleOf(fromFd), nt.handleOf(toFd));
  },
};
