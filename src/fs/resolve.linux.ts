// Linux backend: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) from a
// held directory descriptor, so the kernel refuses any symlink in any component and any escape.
// Kernels without openat2 (< 5.6) get a component-by-component walk: each step opens ONE name
// relative to the previous descriptor with O_NOFOLLOW, so no path string is ever re-resolved and
// no symlink is ever followed. Directory listing and child lstat go through /proc/self/fd/<n>/,
// where the only link crossed is our own descriptor's magic link.

import fs from "node:fs";
import * as sys from "../../platform/fs/linux.ts";
import type { DirEntryInfo, FsNative, OpenKind } from "./native.ts";

const { O } = sys;

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

function walkOpen(dirfd: number, parts: readonly string[], flags: number, mode: number): number {
  if (parts.length === 0) return sys.openat(dirfd, ".", flags, mode);
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
    }
    return cur;
  } catch (err) {
    if (cur !== dirfd) closeQuietly(cur);
    throw err;
  }
}

function direntKind(d: fs.Dirent): DirEntryInfo["kind"] {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "directory";
  if (d.isSymbolicLink()) return "symlink";
  if (d.isFIFO() || d.isSocket() || d.isCharacterDevice() || d.isBlockDevice()) return "other";
  return "unknown";
}

export const linuxNative: FsNative = {
  openRoot(hostPath) {
    try {
      return fs.openSync(hostPath, O.RDONLY | O.DIRECTORY | O.NOFOLLOW | O.CLOEXEC);
    } catch (err) {
      // O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR; the operator deserves the real reason
      if ((err as { code?: string }).code === "ENOTDIR" && fs.lstatSync(hostPath).isSymbolicLink()) throw new sys.SysError(40, "open");
      throw err;
    }
  },

  openBeneath(dirfd, parts, kind, mode = 0) {
    const flags = FLAGS[kind];
    if (sys.hasOpenat2()) {
      // RESOLVE_NO_SYMLINKS already refuses a final symlink with ELOOP; O_NOFOLLOW|O_DIRECTORY
      // would turn that into an ambiguous ENOTDIR, so directory opens drop O_NOFOLLOW here.
      const f = (flags & O.DIRECTORY) !== 0 ? flags & ~O.NOFOLLOW : flags;
      return sys.openat2(dirfd, parts.length === 0 ? "." : parts.join("/"), f, mode);
    }
    return walkOpen(dirfd, parts, flags, mode);
  },

  reopenForRead(objectFd) {
    return fs.openSync(procPath(objectFd), O.RDONLY | O.NONBLOCK | O.NOCTTY | O.CLOEXEC);
  },

  readDir(dirFd) {
    const out: DirEntryInfo[] = [];
    for (const d of fs.readdirSync(procPath(dirFd), { withFileTypes: true })) out.push({ name: d.name, kind: direntKind(d) });
    return out;
  },

  readDirFast(dirFd) {
    return linuxNative.readDir(dirFd);
  },

  lstatChild(dirFd, name) {
    return fs.lstatSync(procPath(dirFd, name), { bigint: true });
  },

  linkAt(dirFd, oldName, newName) {
    sys.linkat(dirFd, oldName, dirFd, newName);
  },
  renameAt(dirFd, oldName, newName) {
    sys.renameat(dirFd, oldName, dirFd, newName);
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
  // user attributes and the POSIX access ACL; security.* labels are assigned by the system
  preservesXattr: (name) => name.startsWith("user.") || name === "system.posix_acl_access",
};
