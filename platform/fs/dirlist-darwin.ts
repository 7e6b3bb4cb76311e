// macOS directory listing through the held descriptor: getattrlistbulk(2) (not variadic, so the
// bun:ffi binding is sound on arm64) reads the entries of the directory the fd names. The old
// readdirSync(path) resolved the path again, which left a swap-and-restore race between that
// lookup and the check that the directory was still the one held open.
// Layout (sys/attr.h): struct attrlist is u16 bitmapcount (5), u16 reserved, then commonattr,
// volattr, dirattr, fileattr, forkattr (u32 each): 24 bytes. With FSOPT_PACK_INVAL_ATTRS every
// requested attribute is present, so each entry is u32 length, attribute_set_t returned (5 x u32),
// u32 error (ATTR_CMN_ERROR), attrreference_t name (i32 offset from itself, u32 length with NUL),
// u32 fsobj_type_t (ATTR_CMN_OBJTYPE).
// Written against the headers; it cannot run on the Linux CI. The decoder is tested on Linux.
import { dlopen, ptr, read as ffiRead, type Pointer } from "bun:ffi";
import type { DirEntryInfo } from "./native-types.ts";
import { SysError } from "./sys-error.ts";

const ATTR_BIT_MAP_COUNT = 5;
const ATTR_CMN_NAME = 0x1;
const ATTR_CMN_OBJTYPE = 0x8;
const ATTR_CMN_ERROR = 0x20000000;
const ATTR_CMN_RETURNED_ATTRS = 0x80000000;
const FSOPT_NOFOLLOW = 0x1;
const FSOPT_PACK_INVAL_ATTRS = 0x8;
const SEEK_SET = 0;
const BUFFER_SIZE = 64 * 1024;

/** enum vtype (sys/vnode.h) to the listing's kinds. */
const VTYPE: Record<number, DirEntryInfo["kind"]> = { 1: "file", 2: "directory", 3: "other", 4: "other", 5: "symlink", 6: "other", 7: "other" };

export function attrListRequest(): Uint8Array {
  const b = new Uint8Array(24);
  const v = new DataView(b.buffer);
  v.setUint16(0, ATTR_BIT_MAP_COUNT, true);
  v.setUint32(4, (ATTR_CMN_RETURNED_ATTRS | ATTR_CMN_NAME | ATTR_CMN_ERROR | ATTR_CMN_OBJTYPE) >>> 0, true);
  return b;
}

/**
 * Decode `count` entries of a getattrlistbulk buffer. A malformed entry makes the whole listing
 * fail (EIO) instead of silently dropping it.
 */
export function decodeBulk(buffer: Uint8Array, count: number): DirEntryInfo[] {
  const v = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const out: DirEntryInfo[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 40 > buffer.length) throw new SysError(5, "getattrlistbulk");
    const length = v.getUint32(at, true);
    if (length < 40 || at + length > buffer.length) throw new SysError(5, "getattrlistbulk");
    // An entry's own error (say, EACCES on its attributes) still leaves its name: listed, kind unknown.
    const error = v.getUint32(at + 24, true);
    const ref = at + 28;
    const nameStart = ref + v.getInt32(ref, true);
    const nameLength = v.getUint32(ref + 4, true);
    if (nameLength < 1 || nameStart < ref || nameStart + nameLength > at + length) throw new SysError(5, "getattrlistbulk");
    const name = new TextDecoder().decode(buffer.subarray(nameStart, nameStart + nameLength - 1));
    out.push({ name, kind: error !== 0 ? "unknown" : (VTYPE[v.getUint32(at + 36, true)] ?? "unknown") });
    at += length;
  }
  return out;
}

function load() {
  return dlopen("/usr/lib/libSystem.B.dylib", {
    __error: { args: [], returns: "ptr" },
    getattrlistbulk: { args: ["i32", "ptr", "ptr", "u64", "u64"], returns: "i32" },
    lseek: { args: ["i32", "i64", "i32"], returns: "i64" },
  }).symbols;
}
let lib: ReturnType<typeof load> | null = null;
const sys = () => (lib ??= load());
const errno = () => ffiRead.i32(sys().__error() as Pointer, 0);

/**
 * The entries of the directory `dirFd` names, one getattrlistbulk buffer (64 KiB) per next(), so
 * a listing that keeps only k entries holds O(k) plus one buffer however large the directory is.
 * "." and ".." are never returned.
 */
export class BulkReader {
  private readonly request = attrListRequest();
  private readonly buffer = new Uint8Array(BUFFER_SIZE);
  private started = false;
  private done = false;
  constructor(private readonly dirFd: number) {}

  /** Hand one buffer's entries to `each`; false once the directory is exhausted. */
  next(each: (name: string, kind: DirEntryInfo["kind"]) => void): boolean {
    if (this.done) return false;
    if (!this.started) {
      if (Number(sys().lseek(this.dirFd, 0n, SEEK_SET)) < 0) throw new SysError(errno(), "lseek");
      this.started = true;
    }
    const count = sys().getattrlistbulk(this.dirFd, ptr(this.request), ptr(this.buffer), BigInt(this.buffer.length), BigInt(FSOPT_NOFOLLOW | FSOPT_PACK_INVAL_ATTRS));
    if (count < 0) throw new SysError(errno(), "getattrlistbulk");
    if (count === 0) {
      this.done = true;
      return false;
    }
    for (const e of decodeBulk(this.buffer, count)) each(e.name, e.kind);
    return true;
  }
}

/** Every entry of the directory `dirFd` names ("." and ".." are never returned). */
export function listDirFd(dirFd: number): DirEntryInfo[] {
  const out: DirEntryInfo[] = [];
  const reader = new BulkReader(dirFd);
  while (reader.next((name, kind) => out.push({ name, kind })));
  return out;
}
