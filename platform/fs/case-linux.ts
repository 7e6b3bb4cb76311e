// Linux part of the case-sensitivity probe. What is observable without writing anything:
// - fstatfs(2) f_type names the filesystem. FAT, exFAT, NTFS, SMB and HFS+ fold case everywhere.
// - ext4, f2fs and tmpfs fold case per directory (`chattr +F`), and only when the filesystem has
//   the casefold feature and the kernel supports it (/sys/fs/<fs>/features/casefold). The flag of
//   the root is FS_IOC_GETFLAGS & FS_CASEFOLD_FL, but any directory below may carry it, so the
//   answer is per filesystem: the ext4 superblock's INCOMPAT_CASEFOLD bit (read from the block
//   device when it is readable), f2fs's per-disk feature list, tmpfs's `casefold` mount option.
//   When the kernel cannot casefold that filesystem, no directory on it can fold.
// - XFS's deprecated ASCII-ci mode is a geometry flag (XFS_IOC_FSGEOMETRY_V4).
// - Any filesystem: looking up a case-swapped spelling of a root entry that finds the same inode
//   proves folding (catches ZFS casesensitivity=insensitive, FUSE and everything unlisted).
// Network, FUSE and unlisted filesystems depend on what is behind them: unknown.
// ioctl(2) is variadic, so it goes through syscall(2) with integer/pointer arguments, which
// x86-64 and aarch64 pass in registers (the same contract as ./linux.ts).

import { dlopen } from "bun:ffi";
import fs from "node:fs";
import path from "node:path";
import { insensitive, sensitive, unknown, type CaseSensitivity } from "./case-result.ts";
import { firstNames } from "./dirents-linux.ts";

const MAGIC = {
  EXT: 0xef53,
  F2FS: 0xf2f52010,
  TMPFS: 0x01021994,
  XFS: 0x58465342,
  BCACHEFS: 0xca451a4e,
  OVERLAY: 0x794c7630,
} as const;

const FOLDING: ReadonlyMap<number, string> = new Map([
  [0x4d44, "vfat/msdos"],
  [0x2011bab0, "exfat"],
  [0x5346544e, "ntfs"],
  [0xff534d42, "cifs"],
  [0xfe534d42, "smb2"],
  [0x517b, "smb"],
  [0x482b, "hfsplus"],
  [0x4244, "hfs"],
  [0x9660, "iso9660"],
]);

/** Filesystems with no case-folding mode at all. */
const NEVER_FOLDING: ReadonlyMap<number, string> = new Map([
  [0x9123683e, "btrfs"],
  [0xe0f5e1e2, "erofs"],
  [0x73717368, "squashfs"],
  [0x858458f6, "ramfs"],
  [0x52654973, "reiserfs"],
  [0x3434, "nilfs2"],
]);

const DEPENDS: ReadonlyMap<number, string> = new Map([
  [0x6969, "nfs"],
  [0x65735546, "fuse"],
  [0x01021997, "9p"],
  [0x2fc12fc1, "zfs"],
  [0x00c36400, "ceph"],
  [0x786f4256, "vboxsf"],
  [0x3153464a, "jfs"],
  [MAGIC.BCACHEFS, "bcachefs"],
]);

const FS_IOC_GETFLAGS = 0x80086601n;
const FS_CASEFOLD_FL = 0x40000000;
const XFS_IOC_FSGEOMETRY_V4 = 0x8070587cn;
const XFS_GEOM_FLAGS_DIRV2CI = 0x1000;
const EXT4_INCOMPAT_CASEFOLD = 0x20000;
const SYS_IOCTL = process.arch === "arm64" ? 29n : 16n;

function load() {
  return dlopen("libc.so.6", {
    fstatfs: { args: ["i32", "ptr"], returns: "i32" },
    syscall: { args: ["i64", "i64", "i64", "ptr"], returns: "i64" },
  }).symbols;
}
let libc: ReturnType<typeof load> | null = null;
function lib(): ReturnType<typeof load> {
  libc ??= load();
  return libc;
}

function fsType(fd: number): number | null {
  const buf = new BigUint64Array(15); // struct statfs is 120 bytes on x86-64 and aarch64
  if (lib().fstatfs(fd, buf) !== 0) return null;
  return Number((buf[0] as bigint) & 0xffffffffn);
}

function ioctl(fd: number, request: bigint, arg: Uint8Array): boolean {
  return Number(lib().syscall(SYS_IOCTL, BigInt(fd), request, arg)) >= 0;
}

function rootCasefolded(fd: number): boolean {
  const flags = new Uint8Array(8);
  return ioctl(fd, FS_IOC_GETFLAGS, flags) && (new DataView(flags.buffer).getUint32(0, true) & FS_CASEFOLD_FL) !== 0;
}

function kernelCanFold(fsName: string): boolean {
  return fs.existsSync(`/sys/fs/${fsName}/features/casefold`);
}

interface MountLine {
  source: string;
  superOptions: string[];
}

/** The mountinfo line of the filesystem holding `dev` (major:minor of the root's st_dev). */
function mountOfDev(dev: bigint): MountLine | null {
  // glibc's gnu_dev_major/gnu_dev_minor
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  let text: string;
  try {
    text = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return null;
  }
  for (const line of text.split("\n")) {
    const f = line.split(" ");
    if (f[2] !== `${major}:${minor}`) continue;
    const dash = f.indexOf("-", 6);
    if (dash < 0) continue;
    return { source: f[dash + 2] ?? "", superOptions: (f[dash + 3] ?? "").split(",") };
  }
  return null;
}

/** The ext4 superblock's casefold bit from a block device or image, or null when it cannot be read. */
export function ext4CasefoldFeature(source: string): boolean | null {
  let fd: number;
  try {
    fd = fs.openSync(source, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const sb = Buffer.alloc(1024);
    if (fs.readSync(fd, sb, 0, 1024, 1024) !== 1024 || sb.readUInt16LE(0x38) !== MAGIC.EXT) return null;
    return (sb.readUInt32LE(0x60) & EXT4_INCOMPAT_CASEFOLD) !== 0;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function f2fsCasefoldFeature(source: string): boolean | null {
  const disk = path.basename(source);
  for (const file of ["features", "feature_list"]) {
    try {
      return /\bcasefold\b/.test(fs.readFileSync(`/sys/fs/f2fs/${disk}/${file}`, "utf8"));
    } catch {
      // older kernels name it the other way
    }
  }
  return null;
}

/**
 * A case-swapped lookup of a root entry that lands on the same inode proves the root folds. Only
 * the first names are decoded (getdents64, dirents-linux.ts): fs.opendirSync read the whole
 * directory first, which for a 300 000-entry root lifted serve's idle memory by ~50 MB.
 */
function swappedLookupFolds(root: string, fd: number): boolean {
  let names: string[];
  try {
    names = firstNames(fd, 256);
  } catch {
    return false;
  }
  for (const name of names) {
    const swapped = name.replace(/[A-Za-z]/g, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
    if (swapped === name) continue;
    try {
      const a = fs.lstatSync(path.join(root, name), { bigint: true });
      const b = fs.lstatSync(path.join(root, swapped), { bigint: true });
      return a.ino === b.ino && a.dev === b.dev;
    } catch {
      return false; // the swapped spelling does not exist: this directory keeps case
    }
  }
  return false;
}

export function linuxCaseSensitivity(root: string): CaseSensitivity {
  let fd: number;
  try {
    fd = fs.openSync(root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
  } catch {
    return unknown("the root cannot be opened");
  }
  try {
    const type = fsType(fd);
    if (type === null) return unknown("statfs failed");
    const folding = FOLDING.get(type);
    if (folding !== undefined) return insensitive(`${folding} matches names case-insensitively`);
    const answer = byType(fd, type);
    if (answer.basis === "detected-insensitive") return answer;
    return swappedLookupFolds(root, fd) ? insensitive("a case-swapped lookup in the root found the same entry") : answer;
  } finally {
    fs.closeSync(fd);
  }
}

function byType(fd: number, type: number): CaseSensitivity {
  const never = NEVER_FOLDING.get(type);
  if (never !== undefined) return sensitive(`${never} has no case-folding mode`);
  const depends = DEPENDS.get(type);
  if (depends !== undefined) return unknown(`${depends}: case sensitivity depends on how it was created or what serves it`);
  if (type === MAGIC.XFS) {
    const geom = new Uint8Array(112);
    if (!ioctl(fd, XFS_IOC_FSGEOMETRY_V4, geom)) return unknown("xfs geometry cannot be read");
    const ci = (new DataView(geom.buffer).getUint32(108, true) & XFS_GEOM_FLAGS_DIRV2CI) !== 0;
    return ci ? insensitive("xfs was made with ASCII case-insensitive names") : sensitive("xfs without ASCII-ci");
  }
  if (type === MAGIC.OVERLAY) {
    // Recent kernels allow casefolded layers; without casefold support anywhere there are none.
    if (["ext4", "f2fs", "tmpfs"].some(kernelCanFold)) return unknown("overlay: its layers may casefold on this kernel");
    return sensitive("overlay, and this kernel cannot casefold any filesystem");
  }
  const fsName = type === MAGIC.EXT ? "ext4" : type === MAGIC.F2FS ? "f2fs" : type === MAGIC.TMPFS ? "tmpfs" : null;
  if (fsName === null) return unknown(`filesystem type 0x${type.toString(16)} is not known to serverfs`);
  if (rootCasefolded(fd)) return insensitive(`${fsName}: the root directory is casefolded (+F)`);
  if (!kernelCanFold(fsName)) return sensitive(`${fsName}, and this kernel has no casefold support for it`);
  const mount = mountOfDev(fs.fstatSync(fd, { bigint: true }).dev);
  if (mount === null) return unknown(`${fsName} may have casefolded directories (its mount is not found)`);
  let feature: boolean | null;
  if (fsName === "ext4") feature = mount.source.startsWith("/dev/") ? ext4CasefoldFeature(mount.source) : null;
  else if (fsName === "f2fs") feature = f2fsCasefoldFeature(mount.source);
  else feature = mount.superOptions.some((o) => o === "casefold" || o.startsWith("casefold=")) ? true : null;
  if (feature === true) return insensitive(`${fsName} has the casefold feature: any directory may fold case`);
  if (feature === false) return sensitive(`${fsName} without the casefold feature`);
  return unknown(`${fsName} on a kernel that can casefold, and its casefold feature cannot be read`);
}
