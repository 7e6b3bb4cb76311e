// The macOS file backend's logic (platform/fs/resolve-darwin.ts) run on Linux: its calls, which
// speak macOS flag values, translated onto Linux syscalls with the same meaning, so the file
// layer's tests exercise the darwin walk, its PATH_MAX steps, its fstatat metadata path, its
// ENXIO refusal of special files and its device confinement here. What only a Mac can show
// (libSystem's ABI, the struct stat layout, O_NOFOLLOW_ANY itself) is test/platform/darwin-fs.test.ts.
// The translation is strict where the darwin backend promises something:
// - a lookup string of 1024 bytes or more is ENAMETOOLONG, as macOS's PATH_MAX makes it;
// - O_NOFOLLOW_ANY is openat2 with RESOLVE_NO_SYMLINKS (a symlink in any component is ELOOP);
// - a lookup without it (only O_SYMLINK's) and every fstatat must name ONE component: anything
//   else would be a path the macOS kernel could follow a symlink in, and fails the test (EINVAL);
// - O_CREAT is never passed to openat (the binding refuses it on macOS).
import fs from "node:fs";
import os from "node:os";
import { O as D } from "../../platform/fs/darwin.ts";
import { DirentReader } from "../../platform/fs/dirents-linux.ts";
import * as linux from "../../platform/fs/linux.ts";
import type { DarwinCalls } from "../../platform/fs/resolve-darwin.ts";
import { SysError } from "../../platform/fs/sys-error.ts";

const L = linux.O;
const E = os.constants.errno;

function translate(flags: number): { flags: number; noFollowAny: boolean } {
  if ((flags & D.CREAT) !== 0) throw new SysError(E.EINVAL, "openat");
  let f = [L.RDONLY, L.WRONLY, L.RDWR][flags & 3] as number;
  if (flags & D.NONBLOCK) f |= L.NONBLOCK;
  if (flags & D.NOFOLLOW) f |= L.NOFOLLOW;
  if (flags & D.DIRECTORY) f |= L.DIRECTORY;
  if (flags & D.NOCTTY) f |= L.NOCTTY;
  if (flags & D.CLOEXEC) f |= L.CLOEXEC;
  if (flags & D.EXEC) f |= L.PATH; // O_SEARCH: a lookup base, search permission only
  if (flags & D.SYMLINK) f |= L.PATH | L.NOFOLLOW; // the symlink itself, metadata only
  // O_EVTONLY: an O_RDONLY open for metadata, read permission needed (already RDONLY)
  return { flags: f, noFollowAny: (flags & D.NOFOLLOW_ANY) !== 0 };
}

function lookup(rel: string): void {
  if (Buffer.byteLength(rel, "utf8") >= 1024) throw new SysError(E.ENAMETOOLONG, "openat");
}

function oneName(name: string, call: string): void {
  if (name === "" || name.includes("/")) throw new SysError(E.EINVAL, `${call}: not one component`);
  lookup(name);
}

export const linuxDarwinCalls: DarwinCalls = {
  openRoot: (realPath) => fs.openSync(realPath, L.RDONLY | L.DIRECTORY | L.NOFOLLOW | L.CLOEXEC),
  openat(dir, rel, flags) {
    lookup(rel);
    const t = translate(flags);
    if (t.noFollowAny) return linux.openat2(dir, rel, t.flags);
    if (rel !== ".") oneName(rel, "openat");
    return linux.openat(dir, rel, t.flags);
  },
  fstatat(dir, name) {
    oneName(name, "fstatat");
    return fs.lstatSync(`/proc/self/fd/${dir}/${name}`, { bigint: true });
  },
  createAt(dir, name, mode) {
    oneName(name, "createAt");
    return linux.openat(dir, name, L.RDWR | L.CREAT | L.EXCL | L.NOFOLLOW | L.NOCTTY, mode);
  },
  dirReader: (fd) => new DirentReader(fd),
  flock: linux.flock,
  ops: {
    linkAt: (dir, oldName, newName) => linux.linkat(dir, oldName, dir, newName),
    renameAt: (dir, oldName, newName) => linux.renameat(dir, oldName, dir, newName),
    renameNoReplace: (srcDir, srcName, dstDir, dstName) => {
      oneName(srcName, "renameNoReplace");
      oneName(dstName, "renameNoReplace");
      linux.renameatNoReplace(srcDir, srcName, dstDir, dstName);
    },
    unlinkAt: linux.unlinkat,
    mkdirAt: linux.mkdirat,
    fchmod: linux.fchmod,
    fchown: linux.fchown,
    listXattrs: linux.listXattrs,
    setXattr: linux.setXattr,
    fsync: (fd) => fs.fsyncSync(fd),
  },
};
