// Linux backend: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from a
// held directory descriptor, so the kernel refuses any symlink in any component and any escape.
// Kernels without openat2 (< 5.6) get a component-by-component walk: each step opens ONE name
// relative to the previous descriptor with O_NOFOLLOW, so no path string is ever re-resolved and
// no symlink is ever followed. Directories are listed with getdents64 on the held descriptor
// itself (dirents-linux.ts); child lstat goes through /proc/self/fd/<n>/, where the only link
// crossed is our own descriptor's magic link.
// A workdir with cross_mounts = false is confined to the mount its root is on: openat2 adds
// RESOLVE_NO_XDEV, the fallback walk compares each component's mount id with its base's, and a
// child lstat goes through such an open instead of the /proc path (which would cross).

import fs from "node:fs";
import { flockDirectory } from "./dir-lock-posix.ts";
import { selectInSteps } from "./dir-select.ts";
import { DirentReader } from "./dirents-linux.ts";
import * as sys from "./linux.ts";
import type { DirEntryInfo, FsNative, OpenKind } from "./native-types.ts";

const { O } = sys;

/**
 * Descriptors whose lookups must stay on their own mount, each with the key of the mount it is on
 * ("" until the fallback walk first needs it; a descriptor never changes mount). Every descriptor
 * used as a lookup base comes from openRoot or openBeneath, and both rewrite its entry, so a
 * reused fd number never inherits a stale answer.
 */
const confined = new Map<number, string>();

function tag(fd: number, noXdev: boolean, mount = ""): number {
  if (noXdev) confined.set(fd, mount);
  else confined.delete(fd);
  return fd;
}

function homeOf(fd: number): string {
  let m = confined.get(fd) ?? "";
  if (m === "") {
    m = mountOf(fd);
    confined.set(fd, m);
  }
  return m;
}

/**
 * The mount a descriptor is on: `mnt_id` from /proc/self/fdinfo (Linux 3.15+), which tells a bind
 * mount of the same filesystem apart; the device number where that line is missing.
 */
function mountOf(fd: number): string {
  try {
    const m = /^mnt_id:\s*(\d+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "latin1"));
    if (m !== null) return `m${m[1]}`;
  } catch (err) {
    // reading fdinfo needs a descriptor: exhaustion is exhaustion, not a mount crossing
    const code = (err as { code?: string }).code;
    if (code === "EMFILE" || code === "ENFILE") throw err;
  }
  return `d${fs.fstatSync(fd, { bigint: true }).dev}`;
}

const FLAGS: Record<OpenKind, number> = {
  object: O.PATH | O.NOFOLLOW,
  dirBase: O.PATH | O.DIRECTORY | O.NOFOLLOW,
  dirList: O.RDONLY | O.DIRECTORY | O.NOFOLLOW,
  read: O.RDONLY | O.NONBLOCK | O.NOFOLLOW | O.NOCTTY,
  createExclusive: O.WRONLY | O.CREAT | O.EXCL | O.NOFOLLOW | O.NOCTTY,
};

function procPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // nothing useful to do
  }
}

/** After ENOTDIR from an O_DIRECTORY|O_NOFOLLOW open, tell a symlink (ELOOP) from a file (ENOTDIR). */
function reclassifyNotDir(dirfd: number, name: string, err: unknown): never {
  let isLink = false;
  try {
    isLink = fs.lstatSync(procPath(dirfd, name)).isSymbolicLink();
  } catch {
    // vanished: keep the original error
  }
  if (isLink) throw new sys.SysError(40, "openat");
  throw err;
}

/** The walk's result and, when confined, the mount it is on (the base's: anything else is refused). */
function walkOpen(dirfd: number, parts: readonly string[], flags: number, mode: number, noXdev: boolean): { fd: number; mount: string } {
  const home = noXdev ? homeOf(dirfd) : "";
  if (parts.length === 0) return { fd: sys.openat(dirfd, ".", flags, mode), mount: home };
  let cur = dirfd;
  try {
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i] as string;
      const last = i === parts.length - 1;
      let next: number;
      try {
        next = last ? sys.openat(cur, name, flags, mode) : sys.openat(cur, name, O.PATH | O.DIRECTORY | O.NOFOLLOW);
      } catch (err) {
        if ((err as sys.SysError).code === "ENOTDIR" && (!last || (flags & O.DIRECTORY) !== 0)) reclassifyNotDir(cur, name, err);
        throw err;
      }
      if (cur !== dirfd) closeQuietly(cur);
      cur = next;
      if (noXdev && mountOf(cur) !== home) throw new sys.MountCrossingError("openat");
    }
    return { fd: cur, mount: home };
  } catch (err) {
    if (cur !== dirfd) closeQuietly(cur);
    throw err;
  }
}

/**
 * In a confined directory, a mount point is not an entry at all: listings, find and search must
 * neither show its name nor descend. Costs one O_PATH open per entry, only where cross_mounts = false.
 */
function isMountPoint(dirFd: number, name: string): boolean {
  let fd: number;
  try {
    fd = linuxNative.openBeneath(dirFd, [name], "object");
  } catch (err) {
    // out of descriptors: the listing fails as a whole rather than guess about this entry
    if (err instanceof sys.SysError && (err.code === "EMFILE" || err.code === "ENFILE")) throw err;
    return err instanceof sys.MountCrossingError;
  }
  confined.delete(fd);
  sys.close(fd);
  return false;
}

export const linuxNative: FsNative = {
  openRoot(hostPath, opts) {
    try {
      return tag(fs.openSync(hostPath, O.RDONLY | O.DIRECTORY | O.NOFOLLOW | O.CLOEXEC), opts?.crossMounts === false);
    } catch (err) {
      // O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR; the operator deserves the real reason
      if ((err as { code?: string }).code === "ENOTDIR" && fs.lstatSync(hostPath).isSymbolicLink()) throw new sys.SysError(40, "open");
      throw err;
    }
  },

  openBeneath(dirfd, parts, kind, mode = 0) {
    const flags = FLAGS[kind];
    const noXdev = confined.has(dirfd);
    if (!sys.hasOpenat2()) {
      const r = walkOpen(dirfd, parts, flags, mode, noXdev);
      return tag(r.fd, noXdev, r.mount);
    }
    // RESOLVE_NO_SYMLINKS already refuses a final symlink with ELOOP; O_NOFOLLOW|O_DIRECTORY
    // would turn that into an ambiguous ENOTDIR, so directory opens drop O_NOFOLLOW here.
    const f = (flags & O.DIRECTORY) !== 0 ? flags & ~O.NOFOLLOW : flags;
    try {
      return tag(sys.openat2(dirfd, parts.length === 0 ? "." : parts.join("/"), f, mode, noXdev), noXdev);
    } catch (err) {
      // request paths hold no ".." and no symlink is resolved, so EXDEV here is NO_XDEV's answer
      if (noXdev && (err as sys.SysError).code === "EXDEV") throw new sys.MountCrossingError("openat2");
      throw err;
    }
  },

  reopenForRead(objectFd) {
    return fs.openSync(procPath(objectFd), O.RDONLY | O.NONBLOCK | O.NOCTTY | O.CLOEXEC);
  },

  readDir(dirFd) {
    const out: DirEntryInfo[] = [];
    const noXdev = confined.has(dirFd);
    const reader = new DirentReader(dirFd);
    while (
      reader.next((name, kind) => {
        if (!noXdev || !isMountPoint(dirFd, name)) out.push({ name, kind });
      })
    );
    return out;
  },

  readDirSmallest(dirFd, k, keep, fresh) {
    const noXdev = confined.has(dirFd);
    const reader = new DirentReader(dirFd, fresh !== true);
    return selectInSteps(k, (name) => (keep === undefined || keep(name)) && !(noXdev && isMountPoint(dirFd, name)), (push) => reader.next(push));
  },

  lstatChild(dirFd, name) {
    // lstat through /proc would report the mounted root of a mount point: open it confined instead
    if (confined.has(dirFd)) {
      const fd = linuxNative.openBeneath(dirFd, [name], "object");
      try {
        return fs.fstatSync(fd, { bigint: true });
      } finally {
        confined.delete(fd);
        closeQuietly(fd);
      }
    }
    return fs.lstatSync(procPath(dirFd, name), { bigint: true });
  },

  linkAt(dirFd, oldName, newName) {
    sys.linkat(dirFd, oldName, dirFd, newName);
  },
  renameAt(dirFd, oldName, newName) {
    sys.renameat(dirFd, oldName, dirFd, newName);
  },
  renameNoReplace(srcDirFd, srcName, dstDirFd, dstName) {
    sys.renameatNoReplace(srcDirFd, srcName, dstDirFd, dstName);
  },
  unlinkAt(dirFd, name, isDir) {
    sys.unlinkat(dirFd, name, isDir);
  },
  mkdirAt(dirFd, name, mode) {
    sys.mkdirat(dirFd, name, mode);
  },
  fchmod: sys.fchmod,
  fchown: sys.fchown,
  listXattrs: sys.listXattrs,
  setXattr: sys.setXattr,
  fsync: sys.fsync,
  closeFast: sys.close,
  openReadChild(dirFd, name) {
    // a read descriptor is never a lookup base, so it needs no entry in `confined`
    return sys.hasOpenat2() ? openReadBeneath(dirFd, name, confined.has(dirFd)) : linuxNative.openBeneath(dirFd, [name], "read");
  },
  tryLockDirectory(dirFd) {
    // a descriptor of its own, never a lookup base: flock on an O_PATH descriptor is EBADF, and a
    // directory opens for real only read-only (so serve needs read permission on it)
    const fd = linuxNative.openBeneath(dirFd, [], "dirList");
    confined.delete(fd);
    return flockDirectory(fd, sys.flock, closeQuietly);
  },
  // user attributes and the POSIX access ACL; security.* labels are assigned by the system
  preservesXattr: (name) => name.startsWith("user.") || name === "system.posix_acl_access",
};

/**
 * Open one child of a held directory for reading, exactly as openBeneath(dirFd, [name], "read")
 * does when openat2 exists (RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS, O_NOFOLLOW|O_NONBLOCK),
 * with RESOLVE_NO_XDEV when `noXdev`. For a thread that does not share this module's record of
 * confined descriptors (the search worker): the caller passes what isConfined() said.
 */
export function openReadBeneath(dirFd: number, name: string, noXdev: boolean): number {
  return sys.openat2(dirFd, name, FLAGS.read, 0, noXdev);
}

/**
 * Record, on this thread, whether lookups below `fd` stay on its mount: for the search worker,
 * which walks below a root the main thread opened and so has no entry for it in `confined`.
 * Called before every unit of work on that root, so a reused descriptor number never keeps an
 * older answer; every descriptor the walk opens below it inherits the answer through openBeneath.
 */
export function adoptConfinement(fd: number, noXdev: boolean): void {
  tag(fd, noXdev);
}

/** Whether openBeneath opens below this descriptor with RESOLVE_NO_XDEV (a cross_mounts = false workdir). */
export function isConfined(fd: number): boolean {
  return confined.has(fd);
}
