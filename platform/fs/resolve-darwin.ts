// macOS backend (written against documented behaviour; it cannot run on the Linux CI). macOS has
// no openat2 and `openat` is variadic (unsafe through bun:ffi on arm64), so every open goes through
// node:fs on an ABSOLUTE path below the resolved root with O_NOFOLLOW_ANY: the kernel then refuses
// a symlink in ANY component of that one lookup. After each open, the root path is re-opened and
// its dev/ino compared with the held root descriptor, so a root renamed or replaced meanwhile is
// detected. Mutations use the non-variadic *at calls on the verified parent descriptor.
// A final symlink (stat_file's lstat semantics) is opened with O_SYMLINK only after its parent
// has been opened with O_NOFOLLOW_ANY, and must then be a symlink.
// A root opened with cross_mounts = false also refuses any object whose device differs from the
// root's (macOS has no RESOLVE_NO_XDEV; every volume, APFS ones included, has its own st_dev).

import fs from "node:fs";
import * as sys from "./darwin.ts";
import { selectInSteps } from "./dir-select.ts";
import { listDirFd } from "./dirlist-darwin.ts";
import { darwinPreservesXattr } from "./xattr-darwin.ts";
import type { DirEntryInfo, FsNative, OpenKind } from "./native.ts";

const { O } = sys;

interface Held {
  path: string;
  root: number;
}

/** What each descriptor we handed out names (fd numbers are reused, entries are overwritten). */
const held = new Map<number, Held>();
const rootIds = new Map<number, { dev: bigint; ino: bigint; confined: boolean }>();

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // nothing to do
  }
}

function sameObject(a: fs.BigIntStats, b: fs.BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function verifyRoot(root: number): void {
  const h = held.get(root);
  const id = rootIds.get(root);
  if (h === undefined || id === undefined) throw new sys.SysError(9, "verify");
  const fd = fs.openSync(h.path, O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY | O.CLOEXEC);
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    if (st.dev !== id.dev || st.ino !== id.ino) throw new sys.SysError(2, "verify"); // the root moved: ENOENT
  } finally {
    closeQuietly(fd);
  }
}

/** Refuse (and close) a descriptor on another device than its confined root. */
function stayOnRootDevice(root: number, fd: number): void {
  const id = rootIds.get(root);
  if (id === undefined || !id.confined) return;
  if (fs.fstatSync(fd, { bigint: true }).dev === id.dev) return;
  closeQuietly(fd);
  throw new sys.MountCrossingError("open");
}

/** In a confined root, a mount point is not an entry: listings and walks never show or enter it. */
function isMountPoint(dir: Held, name: string): boolean {
  if (rootIds.get(dir.root)?.confined !== true) return false;
  let fd: number;
  try {
    fd = openObject(dir, [name]);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EMFILE" || code === "ENFILE") throw err; // fail the listing rather than guess
    return false; // vanished or a symlink in between: the caller's own checks decide
  }
  try {
    stayOnRootDevice(dir.root, fd);
  } catch {
    return true; // stayOnRootDevice closed it
  }
  closeQuietly(fd);
  return false;
}

function base(dirfd: number): Held {
  const h = held.get(dirfd);
  if (h === undefined) throw new sys.SysError(9, "openBeneath"); // EBADF: not one of ours
  return h;
}

function join(dir: string, parts: readonly string[]): string {
  return parts.length === 0 ? dir : `${dir}/${parts.join("/")}`;
}

function openObject(dir: Held, parts: readonly string[]): number {
  const abs = join(dir.path, parts);
  try {
    return fs.openSync(abs, O.EVTONLY | O.NONBLOCK | O.NOFOLLOW_ANY | O.CLOEXEC);
  } catch (err) {
    if ((err as { code?: string }).code !== "ELOOP" || parts.length === 0) throw err;
  }
  // ELOOP: the final component may be a symlink (allowed for stat) or a parent is (refused).
  const parent = fs.openSync(join(dir.path, parts.slice(0, -1)), O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY | O.CLOEXEC);
  try {
    const fd = fs.openSync(abs, O.EVTONLY | O.SYMLINK | O.NONBLOCK | O.CLOEXEC);
    const st = fs.fstatSync(fd, { bigint: true });
    const again = fs.openSync(join(dir.path, parts.slice(0, -1)), O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY | O.CLOEXEC);
    const unchanged = sameObject(fs.fstatSync(again, { bigint: true }), fs.fstatSync(parent, { bigint: true }));
    closeQuietly(again);
    if (!st.isSymbolicLink() || !unchanged) {
      closeQuietly(fd);
      throw new sys.SysError(62, "open"); // ELOOP
    }
    return fd;
  } finally {
    closeQuietly(parent);
  }
}

const FLAGS: Record<Exclude<OpenKind, "object">, number> = {
  dirBase: O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY,
  dirList: O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY,
  read: O.RDONLY | O.NONBLOCK | O.NOCTTY | O.NOFOLLOW_ANY,
  createExclusive: O.WRONLY | O.CREAT | O.EXCL | O.NOCTTY | O.NOFOLLOW_ANY,
};

export const darwinNative: FsNative = {
  openRoot(hostPath, opts) {
    // The configured root is the trusted anchor; its ancestors may be symlinks (/tmp, /var).
    const real = fs.realpathSync(hostPath);
    if (fs.lstatSync(hostPath).isSymbolicLink()) throw new sys.SysError(62, "open");
    const fd = fs.openSync(real, O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY | O.CLOEXEC);
    const st = fs.fstatSync(fd, { bigint: true });
    held.set(fd, { path: real, root: fd });
    rootIds.set(fd, { dev: st.dev, ino: st.ino, confined: opts?.crossMounts === false });
    return fd;
  },

  openBeneath(dirfd, parts, kind, mode = 0) {
    const dir = base(dirfd);
    const fd = kind === "object" ? openObject(dir, parts) : fs.openSync(join(dir.path, parts), FLAGS[kind] | O.CLOEXEC, mode);
    try {
      verifyRoot(dir.root);
    } catch (err) {
      closeQuietly(fd);
      throw err;
    }
    stayOnRootDevice(dir.root, fd);
    held.set(fd, { path: join(dir.path, parts), root: dir.root });
    return fd;
  },

  reopenForRead(objectFd) {
    // The caller compares dev/ino of the result with the object it opened (FILE_CHANGED_DURING_READ).
    const h = base(objectFd);
    const fd = fs.openSync(h.path, FLAGS.read | O.CLOEXEC);
    held.set(fd, h);
    return fd;
  },

  readDir(dirFd) {
    const h = base(dirFd);
    // Through the held descriptor (getattrlistbulk), not by path: nothing to swap in between.
    return listDirFd(dirFd).filter((e) => !isMountPoint(h, e.name));
  },

  readDirSmallest(dirFd, k, keep) {
    // One getattrlistbulk listing is the one chunk, offered in steps.
    const h = base(dirFd);
    return selectInSteps(k, (name) => (keep === undefined || keep(name)) && !isMountPoint(h, name), (push) => {
      // Through the held descriptor (getattrlistbulk), not by path: nothing to swap in between.
      for (const e of listDirFd(dirFd)) push(e.name, e.kind);
      return false;
    });
  },

  lstatChild(dirFd, name) {
    const dir = base(dirFd);
    const fd = openObject(dir, [name]);
    stayOnRootDevice(dir.root, fd);
    try {
      return fs.fstatSync(fd, { bigint: true });
    } finally {
      closeQuietly(fd);
    }
  },

  linkAt: sys.linkat,
  renameAt: sys.renameat,
  renameNoReplace(srcDirFd, srcName, dstDirFd, dstName) {
    // both must be directories this backend handed out (their paths are what later opens trust)
    base(srcDirFd);
    base(dstDirFd);
    sys.renameatExcl(srcDirFd, srcName, dstDirFd, dstName);
  },
  unlinkAt: sys.unlinkat,
  mkdirAt: sys.mkdirat,
  fchmod: sys.fchmod,
  fchown: sys.fchown,
  listXattrs: sys.listXattrs,
  setXattr: sys.setXattr,
  fsync: sys.fsync,
  closeFast: closeQuietly,
  preservesXattr: darwinPreservesXattr,
  copyAcl: sys.copyAcl,
};
