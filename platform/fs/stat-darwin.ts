// macOS metadata without opening the object: fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) on
// the held parent. macOS has no O_PATH, so an "object" open needs read permission and a unix
// socket refuses open(2) altogether (EOPNOTSUPP); Linux answers both through O_PATH. fstatat is
// not variadic, so its bun:ffi binding is sound on both architectures.
// The buffer is the 64-bit-inode `struct stat` (<sys/stat.h>, __DARWIN_STRUCT_STAT64), 144 bytes,
// little-endian on both x86_64 and arm64:
//   0 st_dev i32 | 4 st_mode u16 | 6 st_nlink u16 | 8 st_ino u64 | 16 st_uid u32 | 20 st_gid u32
//   24 st_rdev i32 | 28 (padding) | 32 st_atimespec | 48 st_mtimespec | 64 st_ctimespec
//   80 st_birthtimespec (each timespec: tv_sec i64, tv_nsec i64) | 96 st_size i64
//   104 st_blocks i64 | 112 st_blksize i32 | 116 st_flags u32 | 120 st_gen u32
//   124 st_lspare i32 | 128 st_qspare i64[2]
// x86_64 exports that layout as `fstatat$INODE64` (plain `fstatat` there is the old 32-bit-inode
// struct); arm64 has only the 64-bit-inode one, as `fstatat` (same rule as statfs in mounts-darwin.ts).
// The decoder is pure and tested on Linux against a hand-built buffer.
import type { BigIntStats } from "node:fs";

export const STAT64_SIZE = 144;
export const AT_SYMLINK_NOFOLLOW = 0x20;

export function fstatatSymbol(arch: string): "fstatat$INODE64" | "fstatat" {
  return arch === "x64" ? "fstatat$INODE64" : "fstatat";
}

const S_IFMT = 0o170000n;
const NS_PER_MS = 1_000_000n;

/**
 * The fields of node's BigIntStats, filled from a decoded struct stat. The `*Instant` members
 * are left out: Bun's own fstat does not fill them either (undefined), and nothing reads them.
 */
class DarwinStats implements Omit<BigIntStats, "atimeInstant" | "mtimeInstant" | "ctimeInstant" | "birthtimeInstant"> {
  constructor(
    readonly dev: bigint,
    readonly ino: bigint,
    readonly mode: bigint,
    readonly nlink: bigint,
    readonly uid: bigint,
    readonly gid: bigint,
    readonly rdev: bigint,
    readonly size: bigint,
    readonly blksize: bigint,
    readonly blocks: bigint,
    readonly atimeNs: bigint,
    readonly mtimeNs: bigint,
    readonly ctimeNs: bigint,
    readonly birthtimeNs: bigint,
  ) {}
  get atimeMs(): bigint {
    return this.atimeNs / NS_PER_MS;
  }
  get mtimeMs(): bigint {
    return this.mtimeNs / NS_PER_MS;
  }
  get ctimeMs(): bigint {
    return this.ctimeNs / NS_PER_MS;
  }
  get birthtimeMs(): bigint {
    return this.birthtimeNs / NS_PER_MS;
  }
  get atime(): Date {
    return new Date(Number(this.atimeMs));
  }
  get mtime(): Date {
    return new Date(Number(this.mtimeMs));
  }
  get ctime(): Date {
    return new Date(Number(this.ctimeMs));
  }
  get birthtime(): Date {
    return new Date(Number(this.birthtimeMs));
  }
  private is(type: bigint): boolean {
    return (this.mode & S_IFMT) === type;
  }
  isFile(): boolean {
    return this.is(0o100000n);
  }
  isDirectory(): boolean {
    return this.is(0o040000n);
  }
  isSymbolicLink(): boolean {
    return this.is(0o120000n);
  }
  isBlockDevice(): boolean {
    return this.is(0o060000n);
  }
  isCharacterDevice(): boolean {
    return this.is(0o020000n);
  }
  isFIFO(): boolean {
    return this.is(0o010000n);
  }
  isSocket(): boolean {
    return this.is(0o140000n);
  }
}

/** Decode a 64-bit-inode struct stat (layout above). A short buffer is EIO's business: refuse it. */
export function decodeStat64(buf: Uint8Array): BigIntStats {
  if (buf.byteLength < STAT64_SIZE) throw new RangeError(`struct stat needs ${STAT64_SIZE} bytes, got ${buf.byteLength}`);
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const ts = (at: number) => v.getBigInt64(at, true) * 1_000_000_000n + v.getBigInt64(at + 8, true);
  const st = new DarwinStats(
    BigInt(v.getInt32(0, true)),
    v.getBigUint64(8, true),
    BigInt(v.getUint16(4, true)),
    BigInt(v.getUint16(6, true)),
    BigInt(v.getUint32(16, true)),
    BigInt(v.getUint32(20, true)),
    BigInt(v.getInt32(24, true)),
    v.getBigInt64(96, true),
    BigInt(v.getInt32(112, true)),
    v.getBigInt64(104, true),
    ts(32),
    ts(48),
    ts(64),
    ts(80),
  );
  return st as unknown as BigIntStats;
}

/** S_IFMT of a stat that open(2) must not touch: sockets refuse it, FIFOs and devices have side effects. */
export function isSpecial(st: BigIntStats): boolean {
  return !st.isFile() && !st.isDirectory() && !st.isSymbolicLink();
}
