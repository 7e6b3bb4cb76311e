// macOS backend (written against Apple's headers and the xnu sources; it cannot run on the Linux
// CI: docs/platform.md, "macOS: verified / written / checks to run on a Mac"). macOS has no
// openat2, so every lookup is openat(2) relative to a held descriptor with O_NOFOLLOW_ANY: the
// kernel refuses a symlink in ANY component of that lookup, and a request path holds no "..", so
// no lookup leaves the descriptor it starts from. Only the configured root is opened by name, once
// (the trusted anchor, as on Linux); from then on no path string is resolved from "/", so a root
// renamed or swapped meanwhile cannot redirect anything: the held descriptor is the root.
// - Long paths: PATH_MAX is 1024, so a deeper path is looked up in steps below it (path-chunks.ts).
// - A root opened with cross_mounts = false (macOS has no RESOLVE_NO_XDEV; every volume, APFS
//   ones included, has its own st_dev) is walked one component at a time, and every descriptor
//   and every child's fstatat must be on the root's device.
// - Metadata never needs the object opened: fstatat(parent, name, AT_SYMLINK_NOFOLLOW) on the
//   held parent (stat-darwin.ts), so unreadable files and directories and unix sockets are
//   listed and stat'ed as on Linux. An "object" open (the content paths' type check) opens only
//   regular files, directories and symlinks; a socket, FIFO or device answers ENXIO
//   (UNSUPPORTED_FILE_TYPE), as Linux's content paths do for them, and is never opened.
// - A final symlink is opened with O_SYMLINK, one component relative to its verified parent
//   (O_SYMLINK | O_NOFOLLOW_ANY is EINVAL before macOS 15, and there is no other component).
// A directory used only as a lookup base (dirBase, and each step before the last) is opened
// O_RDONLY, and after EACCES once more with O_SEARCH, which needs search permission only, as
// Linux's O_PATH does. O_SEARCH is in current xnu headers; on a kernel without it the retry is a
// second O_RDONLY (or EINVAL), and the first EACCES is what the caller sees. Only bases are
// retried: descriptors that get listed, read or synced are never O_SEARCH.

import fs from "node:fs";
import os from "node:os";
import * as darwin from "./darwin.ts";
import { flockDirectory } from "./dir-lock-posix.ts";
import { selectInSteps } from "./dir-select.ts";
import { BulkReader } from "./dirlist-darwin.ts";
import { HeldDescriptors, type FileIdentity } from "./held-fds.ts";
import { chunkParts } from "./path-chunks.ts";
import { isSpecial } from "./stat-darwin.ts";
import { MountCrossingError, SysError } from "./sys-error.ts";
import { darwinPreservesXattr } from "./xattr-darwin.ts";
import type { DirEntryInfo, FsNative, OpenKind } from "./native-types.ts";

const { O } = darwin;
// By name, so the numbers are the running kernel's (the same as macOS's when it runs there).
const { EBADF, ENXIO, ELOOP } = os.constants.errno;

/**
 * The calls this backend makes, with macOS flag values and errno names. `darwinCalls` is
 * libSystem; a test can hand in a translation onto another kernel (the file layer's own tests
 * then run this backend's logic on Linux: test/support/darwin-calls-linux.ts).
 */
export interface DarwinCalls {
  /** open(2) of the configured root by name (the one by-name open). */
  openRoot(realPath: string, flags: number): number;
  openat(dir: number, rel: string, flags: number): number;
  /** lstat of one name (never a path) beneath `dir`. */
  fstatat(dir: number, name: string): fs.BigIntStats;
  createAt(dir: number, name: string, mode: number): number;
  /** One chunk of a directory's entries per call; false once exhausted. */
  dirReader(dirFd: number): { next(each: (name: string, kind: DirEntryInfo["kind"]) => void): boolean };
  /** flock(2) with macOS's LOCK_* values (the same numbers as Linux's). */
  flock(fd: number, operation: number): void;
  ops: Pick<FsNative, "linkAt" | "renameAt" | "renameNoReplace" | "unlinkAt" | "mkdirAt" | "fchmod" | "fchown" | "listXattrs" | "setXattr" | "fsync" | "copyAcl">;
}

export const darwinCalls: DarwinCalls = {
  openRoot: (realPath, flags) => fs.openSync(realPath, flags),
  openat: darwin.openat,
  fstatat: darwin.fstatat,
  createAt: darwin.createAt,
  dirReader: (fd) => new BulkReader(fd),
  flock: darwin.flock,
  ops: {
    linkAt: darwin.linkat,
    renameAt: darwin.renameat,
    renameNoReplace: darwin.renameatExcl,
    unlinkAt: darwin.unlinkat,
    mkdirAt: darwin.mkdirat,
    fchmod: darwin.fchmod,
    fchown: darwin.fchown,
    listXattrs: darwin.listXattrs,
    setXattr: darwin.setXattr,
    fsync: darwin.fsync,
    copyAcl: darwin.copyAcl,
  },
};

/** The backend over `sys` (libSystem in production). Each call makes its own descriptor table. */
export function makeDarwinNative(sys: DarwinCalls): FsNative {
  interface Held {
    root: number;
    /** What `root` named when it was opened: a root descriptor closed and its number reused is no root. */
    rootId: FileIdentity;
    /** The root was opened with cross_mounts = false. */
    confined: boolean;
    /** From the root, for reopenForRead (there is no /proc/self/fd on macOS). */
    parts: readonly string[];
  }

  function identify(fd: number): FileIdentity | null {
    try {
      const st = fs.fstatSync(fd, { bigint: true });
      return { dev: st.dev, ino: st.ino };
    } catch {
      return null; // not open
    }
  }

  /**
   * What each descriptor we handed out names. The file layer closes most of them itself, so an
   * entry holds only while its number still names the object it was recorded for (held-fds.ts);
   * the closes below drop theirs at once.
   */
  const held = new HeldDescriptors<Held>(identify);

  const DIR = O.RDONLY | O.DIRECTORY | O.NOFOLLOW_ANY | O.CLOEXEC;
  /** O_SEARCH (O_EXEC | O_DIRECTORY): a lookup base that needs search permission only. */
  const SEARCH = O.EXEC | O.DIRECTORY | O.NOFOLLOW_ANY | O.CLOEXEC;
  const OBJECT = O.EVTONLY | O.NONBLOCK | O.NOFOLLOW_ANY | O.CLOEXEC;
  const OBJECT_SYMLINK = O.EVTONLY | O.SYMLINK | O.NONBLOCK | O.CLOEXEC;
  const FLAGS: Record<"dirBase" | "dirList" | "read", number> = {
    dirBase: DIR,
    dirList: DIR,
    read: O.RDONLY | O.NONBLOCK | O.NOCTTY | O.NOFOLLOW_ANY | O.CLOEXEC,
  };

  function closeQuietly(fd: number): void {
    held.drop(fd);
    try {
      fs.closeSync(fd);
    } catch {
      // nothing to do
    }
  }

  /** The held entry of `fd` (still naming what it was recorded for), once its root descriptor is proved to still be the root. */
  function base(fd: number): Held & { id: { dev: bigint; ino: bigint; confined: boolean } } {
    const h = held.lookup(fd);
    if (h === undefined) throw new SysError(EBADF, "openBeneath");
    const root = identify(h.root);
    if (root === null || root.dev !== h.rootId.dev || root.ino !== h.rootId.ino) throw new SysError(EBADF, "openBeneath");
    return { ...h, id: { dev: h.rootId.dev, ino: h.rootId.ino, confined: h.confined } };
  }

  /** Refuse (and close) a descriptor on another device than its confined root. */
  function onRootDevice(dir: ReturnType<typeof base>, fd: number): number {
    let off: boolean;
    try {
      off = offRootDevice(dir, fd);
    } catch (err) {
      closeQuietly(fd);
      throw err;
    }
    if (!off) return fd;
    closeQuietly(fd);
    throw new MountCrossingError("openat");
  }

  function statOnRootDevice(dir: ReturnType<typeof base>, st: fs.BigIntStats): fs.BigIntStats {
    if (dir.id.confined && st.dev !== dir.id.dev) throw new MountCrossingError("fstatat");
    return st;
  }

  /** One openat; a lookup base (`baseOnly`) refused for lack of read permission is retried with O_SEARCH. */
  function openStep(at: number, rel: string, flags: number, baseOnly: boolean): number {
    try {
      return sys.openat(at, rel, flags);
    } catch (err) {
      if (!baseOnly || (err as { code?: string }).code !== "EACCES") throw err;
      try {
        return sys.openat(at, rel, SEARCH);
      } catch {
        throw err; // no O_SEARCH here, or no search permission either: the first answer stands
      }
    }
  }

  function offRootDevice(dir: ReturnType<typeof base>, fd: number): boolean {
    return dir.id.confined && fs.fstatSync(fd, { bigint: true }).dev !== dir.id.dev;
  }

  /**
   * Open `parts` beneath `from` with `flags` on the last step: each step a relative path below
   * PATH_MAX (one component per step when confined), every step before it a directory used only
   * as a base. `baseOnly`: the result too is only a base (never listed, read or synced).
   */
  function walk(dir: ReturnType<typeof base>, from: number, parts: readonly string[], flags: number, baseOnly = false): number {
    if (parts.length === 0) return onRootDevice(dir, openStep(from, ".", flags, baseOnly));
    const steps = dir.id.confined ? parts.map((p) => [p]) : chunkParts(parts);
    let cur = from;
    try {
      for (let i = 0; i < steps.length; i++) {
        const last = i === steps.length - 1;
        const next = openStep(cur, (steps[i] as string[]).join("/"), last ? flags : DIR, last ? baseOnly : true);
        if (cur !== from) closeQuietly(cur);
        cur = next;
        if (offRootDevice(dir, cur)) throw new MountCrossingError("openat");
      }
      return cur;
    } catch (err) {
      if (cur !== from) closeQuietly(cur);
      throw err;
    }
  }

  /** Run `fn` on the parent of the last part (held open for the call) and that last name. */
  function inParent<R>(dir: ReturnType<typeof base>, from: number, parts: readonly string[], fn: (parentFd: number, name: string) => R): R {
    const name = parts[parts.length - 1] as string;
    if (parts.length === 1) return fn(from, name);
    const parent = walk(dir, from, parts.slice(0, -1), DIR, true);
    try {
      return fn(parent, name);
    } finally {
      closeQuietly(parent);
    }
  }

  /** An "object" open of one name: never follows it, never opens a socket, FIFO or device. */
  function openObjectAt(dir: ReturnType<typeof base>, parentFd: number, name: string): number {
    const before = statOnRootDevice(dir, sys.fstatat(parentFd, name));
    if (isSpecial(before)) throw new SysError(ENXIO, "open");
    const fd = onRootDevice(dir, sys.openat(parentFd, name, before.isSymbolicLink() ? OBJECT_SYMLINK : OBJECT));
    let special = true;
    try {
      // Swapped for a FIFO or device between the fstatat and the open (O_SYMLINK opens any type).
      special = isSpecial(fs.fstatSync(fd, { bigint: true }));
    } finally {
      if (special) closeQuietly(fd);
    }
    if (special) throw new SysError(ENXIO, "open");
    return fd;
  }

  /** In a confined root, a mount point is not an entry: listings and walks never show or enter it. */
  function isMountPoint(dir: ReturnType<typeof base>, dirFd: number, name: string): boolean {
    if (!dir.id.confined) return false;
    try {
      return sys.fstatat(dirFd, name).dev !== dir.id.dev;
    } catch {
      return false; // vanished: the caller's own checks decide
    }
  }

  return {
    openRoot(hostPath, opts) {
      // The configured root is the trusted anchor; its ancestors may be symlinks (/tmp, /var).
      const real = fs.realpathSync(hostPath);
      if (fs.lstatSync(hostPath).isSymbolicLink()) throw new SysError(ELOOP, "open");
      const fd = sys.openRoot(real, DIR);
      const st = fs.fstatSync(fd, { bigint: true });
      const id = { dev: st.dev, ino: st.ino };
      held.record(fd, { root: fd, rootId: id, confined: opts?.crossMounts === false, parts: [] }, id);
      return fd;
    },

    openBeneath(dirfd, parts, kind: OpenKind, mode = 0) {
      const dir = base(dirfd);
      let fd: number;
      if (kind === "object") fd = parts.length === 0 ? walk(dir, dirfd, [], OBJECT) : inParent(dir, dirfd, parts, (p, n) => openObjectAt(dir, p, n));
      else if (kind === "createExclusive") fd = inParent(dir, dirfd, parts, (p, n) => onRootDevice(dir, sys.createAt(p, n, mode)));
      else fd = walk(dir, dirfd, parts, FLAGS[kind], kind === "dirBase");
      held.record(fd, { root: dir.root, rootId: dir.rootId, confined: dir.confined, parts: [...dir.parts, ...parts] });
      return fd;
    },

    statBeneath(dirfd, parts) {
      const dir = base(dirfd);
      if (parts.length === 0) return fs.fstatSync(dirfd, { bigint: true });
      return inParent(dir, dirfd, parts, (p, n) => statOnRootDevice(dir, sys.fstatat(p, n)));
    },

    reopenForRead(objectFd) {
      // By name again, from the held root; the caller compares dev/ino of the result with the
      // object it opened (FILE_CHANGED_DURING_READ), so a name moved meanwhile is caught.
      const h = base(objectFd);
      const fd = walk(h, h.root, h.parts, FLAGS.read);
      held.record(fd, { root: h.root, rootId: h.rootId, confined: h.confined, parts: h.parts });
      return fd;
    },

    readDir(dirFd) {
      const dir = base(dirFd);
      // Through the held descriptor (getattrlistbulk), not by path: nothing to swap in between.
      const out: DirEntryInfo[] = [];
      const reader = sys.dirReader(dirFd);
      while (
        reader.next((name, kind) => {
          if (!isMountPoint(dir, dirFd, name)) out.push({ name, kind });
        })
      );
      return out;
    },

    readDirSmallest(dirFd, k, keep) {
      // One getattrlistbulk buffer per chunk, so memory stays O(k) plus one buffer.
      const dir = base(dirFd);
      const reader = sys.dirReader(dirFd);
      return selectInSteps(k, (name) => (keep === undefined || keep(name)) && !isMountPoint(dir, dirFd, name), (push) => reader.next(push));
    },

    lstatChild(dirFd, name) {
      return statOnRootDevice(base(dirFd), sys.fstatat(dirFd, name));
    },

    ...sys.ops,
    renameNoReplace(srcDirFd, srcName, dstDirFd, dstName) {
      // both must be directories this backend handed out (their identities are what later opens trust)
      base(srcDirFd);
      base(dstDirFd);
      sys.ops.renameNoReplace(srcDirFd, srcName, dstDirFd, dstName);
    },
    closeFast: closeQuietly,
    preservesXattr: darwinPreservesXattr,
    tryLockDirectory(dirFd) {
      // "." of the held directory, a descriptor of the lock's own: O_RDONLY, or O_SEARCH where
      // the directory is not readable (xnu's flock takes any vnode descriptor)
      const fd = walk(base(dirFd), dirFd, [], DIR, true);
      return flockDirectory(fd, sys.flock, closeQuietly);
    },
  };
}

export const darwinNative: FsNative = makeDarwinNative(darwinCalls);
