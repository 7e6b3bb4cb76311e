// Handle-relative NT file calls for the Windows backend (platform/fs/resolve-windows.ts), through
// bun:ffi. Every open names ONE component relative to a held directory handle
// (OBJECT_ATTRIBUTES.RootDirectory), with FILE_OPEN_REPARSE_POINT so no symlink, junction or mount
// point is ever followed. HANDLEs travel as u64 (BigInt); structs are Uint8Arrays passed by ptr().
// Failures throw NtError carrying the POSIX errno *name* the rest of the file layer switches on.

import { CFunction, dlopen, FFIType, ptr, type Pointer } from "bun:ffi";
import { NtError, ReparsePointError, ShortNameError } from "./sys-error.ts";

export { NtError, ReparsePointError, ShortNameError };

const STATUS: Record<number, string> = {
  0xc000000f: "ENOENT", // NO_SUCH_FILE
  0xc0000034: "ENOENT", // OBJECT_NAME_NOT_FOUND
  0xc000003a: "ENOENT", // OBJECT_PATH_NOT_FOUND
  0xc0000056: "ENOENT", // DELETE_PENDING: the name is already on its way out
  0xc0000035: "EEXIST", // OBJECT_NAME_COLLISION
  0xc0000103: "ENOTDIR", // NOT_A_DIRECTORY
  0xc00000ba: "EISDIR", // FILE_IS_A_DIRECTORY
  0xc0000022: "EACCES", // ACCESS_DENIED
  0xc0000043: "EBUSY", // SHARING_VIOLATION
  0xc0000121: "EPERM", // CANNOT_DELETE (read-only attribute)
  0xc0000101: "ENOTEMPTY", // DIRECTORY_NOT_EMPTY
  0xc0000033: "EINVAL", // OBJECT_NAME_INVALID
  0xc0000106: "ENAMETOOLONG", // NAME_TOO_LONG
  0xc000011f: "EMFILE", // TOO_MANY_OPENED_FILES
  0xc000009a: "ENOMEM", // INSUFFICIENT_RESOURCES
  0xc000007f: "ENOSPC", // DISK_FULL
  0xc0000044: "EDQUOT", // QUOTA_EXCEEDED
  0xc0000802: "EDQUOT", // DISK_QUOTA_EXCEEDED
  0xc0000185: "EIO", // IO_DEVICE_ERROR
  0xc000009c: "EIO", // DEVICE_DATA_ERROR
  0xc000016a: "EIO", // DISK_OPERATION_FAILED
  0xc00000d4: "EXDEV", // NOT_SAME_DEVICE
  0xc00000a2: "EROFS", // MEDIA_WRITE_PROTECTED
  0x8000002d: "ELOOP", // STOPPED_ON_SYMLINK
  0xc000050b: "ELOOP", // REPARSE_POINT_ENCOUNTERED
  0xc0000002: "ENOTSUP", // NOT_IMPLEMENTED
  0xc0000003: "ENOTSUP", // INVALID_INFO_CLASS
  0xc00000bb: "ENOTSUP", // NOT_SUPPORTED
  0xc000000d: "EINVAL", // INVALID_PARAMETER
};

export function ntCheck(status: number, syscall: string): void {
  const s = status >>> 0;
  if (s < 0x80000000) return;
  // An unlisted status is named as such, not as EIO: IO_ERROR tells the caller the device failed.
  throw new NtError(STATUS[s] ?? "ENTSTATUS", s, syscall);
}

const { u64, u32, i32, ptr: P } = FFIType;

function loadNtdll() {
  return dlopen("ntdll.dll", {
    NtCreateFile: { args: [P, u32, P, P, P, u32, u32, u32, u32, P, u32], returns: i32 },
    NtQueryDirectoryFile: { args: [u64, u64, P, P, P, P, u32, u32, i32, P, i32], returns: i32 },
    NtQueryInformationFile: { args: [u64, P, P, u32, u32], returns: i32 },
    NtSetInformationFile: { args: [u64, P, P, u32, u32], returns: i32 },
    NtFlushBuffersFile: { args: [u64, P], returns: i32 },
    NtClose: { args: [u64], returns: i32 },
    RtlDosPathNameToNtPathName_U_WithStatus: { args: [P, P, P, P], returns: i32 },
    RtlFreeUnicodeString: { args: [P], returns: u32 },
  }).symbols;
}

function loadKernel32() {
  return dlopen("kernel32.dll", {
    GetModuleHandleW: { args: [P], returns: u64 },
    GetProcAddress: { args: [u64, P], returns: u64 },
  }).symbols;
}

let nt: ReturnType<typeof loadNtdll> | null = null;
let k32: ReturnType<typeof loadKernel32> | null = null;
export function ntdll(): ReturnType<typeof loadNtdll> {
  if (nt === null) nt = loadNtdll();
  return nt;
}
function kernel32(): ReturnType<typeof loadKernel32> {
  if (k32 === null) k32 = loadKernel32();
  return k32;
}

// ACCESS_MASK, share, disposition and option bits (winnt.h / ntifs.h).
export const A = {
  READ_DATA: 0x1, // FILE_LIST_DIRECTORY on a directory
  WRITE_DATA: 0x2,
  APPEND_DATA: 0x4,
  READ_EA: 0x8,
  WRITE_EA: 0x10,
  TRAVERSE: 0x20,
  READ_ATTRIBUTES: 0x80,
  WRITE_ATTRIBUTES: 0x100,
  DELETE: 0x10000,
  READ_CONTROL: 0x20000,
  WRITE_DAC: 0x40000,
  SYNCHRONIZE: 0x100000,
} as const;
export const SHARE_ALL = 0x7; // read | write | delete: a replace or delete by someone else is never blocked by us
export const DISP = { OPEN: 1, CREATE: 2, OPEN_IF: 3 } as const;
export const OPT = {
  DIRECTORY_FILE: 0x1,
  SYNCHRONOUS_IO_NONALERT: 0x20,
  NON_DIRECTORY_FILE: 0x40,
  OPEN_FOR_BACKUP_INTENT: 0x4000,
  OPEN_REPARSE_POINT: 0x200000,
} as const;
const OBJ_CASE_INSENSITIVE = 0x40;
export const ATTR_DIRECTORY = 0x10;
export const ATTR_REPARSE_POINT = 0x400;
export const TAG_SYMLINK = 0xa000000c;
export const TAG_MOUNT_POINT = 0xa0000003; // junctions and volume mount points

/**
 * IsReparseTagNameSurrogate (bit 29): the reparse point stands for another name (symlink,
 * junction, mount point) and opening through it would reach that name. Every other tag (cloud
 * placeholders such as OneDrive's, dedup, WOF compression, HSM) marks a file that is what it is.
 */
export function isNameSurrogate(tag: number): boolean {
  return (tag & 0x20000000) !== 0;
}

export function wide(text: string): Uint16Array {
  const out = new Uint16Array(text.length + 1);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

function utf16(buf: Uint8Array, off: number, bytes: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset + off, bytes).toString("utf16le");
}

/** NtCreateFile of ONE name relative to `root`; returns the handle. `name` "" reopens `root` itself. */
export function ntOpen(root: bigint, name: string, access: number, disposition: number, options: number, attrs = 0): bigint {
  const text = Buffer.from(name, "utf16le");
  const us = new Uint8Array(16);
  const usv = new DataView(us.buffer);
  usv.setUint16(0, text.length, true);
  usv.setUint16(2, text.length, true);
  if (text.length > 0) usv.setBigUint64(8, BigInt(ptr(text)), true);
  const oa = new Uint8Array(48);
  const oav = new DataView(oa.buffer);
  oav.setUint32(0, 48, true);
  oav.setBigUint64(8, root, true);
  oav.setBigUint64(16, BigInt(ptr(us)), true);
  // Win32 semantics: names match case-insensitively (the policy folds case on Windows too).
  oav.setUint32(24, OBJ_CASE_INSENSITIVE, true);
  const out = new BigUint64Array(1);
  const iosb = new Uint8Array(16);
  const st = ntdll().NtCreateFile(out, access | A.SYNCHRONIZE, oa, iosb, null, attrs, SHARE_ALL, disposition, options | OPT.SYNCHRONOUS_IO_NONALERT, null, 0);
  ntCheck(st, "NtCreateFile");
  return out[0] as bigint;
}

/**
 * Open a host path by name (the workdir root, a scratch tree's top) as one NtCreateFile: the Win32
 * spelling becomes an NT path (RtlDosPathNameToNtPathName_U_WithStatus: `C:\x` -> `\??\C:\x`,
 * relative names against the current directory, UNC shares) and is opened with
 * FILE_OPEN_REPARSE_POINT, so a final link is opened as itself. No FILE_OPEN_FOR_BACKUP_INTENT
 * (CreateFileW's FILE_FLAG_BACKUP_SEMANTICS would set it): NtCreateFile opens a directory without
 * it, and with an enabled backup privilege it would bypass the DACL. Errors are the NT status of
 * this very call, never a GetLastError read after other code ran.
 */
export function openPathNoFollow(path: string, access: number, options = 0, disposition: number = DISP.OPEN): bigint {
  const us = new Uint8Array(16);
  ntCheck(ntdll().RtlDosPathNameToNtPathName_U_WithStatus(wide(path), us, null, null), "RtlDosPathNameToNtPathName");
  try {
    const oa = new Uint8Array(48);
    const oav = new DataView(oa.buffer);
    oav.setUint32(0, 48, true);
    oav.setBigUint64(16, BigInt(ptr(us)), true);
    oav.setUint32(24, OBJ_CASE_INSENSITIVE, true);
    const out = new BigUint64Array(1);
    const st = ntdll().NtCreateFile(out, access | A.SYNCHRONIZE, oa, new Uint8Array(16), null, 0, SHARE_ALL, disposition, options | OPT.OPEN_REPARSE_POINT | OPT.SYNCHRONOUS_IO_NONALERT, null, 0);
    ntCheck(st, "NtCreateFile");
    return out[0] as bigint;
  } finally {
    ntdll().RtlFreeUnicodeString(us);
  }
}

export function ntClose(h: bigint): void {
  ntdll().NtClose(h);
}

export function queryInfo(h: bigint, cls: number, size: number, syscall: string): Uint8Array {
  const buf = new Uint8Array(size);
  ntCheck(ntdll().NtQueryInformationFile(h, new Uint8Array(16), buf, size, cls), syscall);
  return buf;
}

export function setInfo(h: bigint, cls: number, info: Uint8Array, syscall: string): number {
  const st = ntdll().NtSetInformationFile(h, new Uint8Array(16), info, info.length, cls);
  return st >>> 0;
}

/** FileAttributeTagInformation: attributes and, for a reparse point, its tag. */
export function attributeTag(h: bigint): { attributes: number; tag: number } {
  const b = queryInfo(h, 35, 8, "NtQueryInformationFile");
  const v = new DataView(b.buffer);
  return { attributes: v.getUint32(0, true), tag: v.getUint32(4, true) };
}

/**
 * The last component of the handle's name with every 8.3 alias expanded: FileNormalizedNameInformation
 * (what GetFinalPathNameByHandle asks), or FileNameInformation where that class is unknown (Wine).
 */
export function storedName(h: bigint): string {
  const full = handlePath(h);
  return full.slice(full.lastIndexOf("\\") + 1);
}

/** The handle's whole path on its volume (`\\dir\\name`), 8.3 aliases expanded where the system can. */
export function handlePath(h: bigint): string {
  let cls = 48;
  for (let size = 4 + 2 * 512; ; ) {
    const buf = new Uint8Array(size);
    const st = ntdll().NtQueryInformationFile(h, new Uint8Array(16), buf, size, cls) >>> 0;
    if ((STATUS[st] === "ENOTSUP" || STATUS[st] === "EINVAL") && cls === 48) {
      cls = 9;
      continue;
    }
    if (st === 0x80000005 && size < 4 + 2 * 32768) {
      size = 4 + 2 * 32768; // BUFFER_OVERFLOW: the longest NT path fits
      continue;
    }
    ntCheck(st, "NtQueryInformationFile");
    return utf16(buf, 4, new DataView(buf.buffer).getUint32(0, true));
  }
}

/**
 * Wine opens a Unix symlink's target even under FILE_OPEN_REPARSE_POINT and reports no reparse
 * attribute on the handle (measured with Wine 8.0), so under Wine each component's name is
 * checked instead: the handle's name is then the target's. Real Windows never follows here.
 */
let wine: boolean | null = null;
export function underWine(): boolean {
  if (wine === null) {
    const mod = kernel32().GetModuleHandleW(wide("ntdll.dll"));
    wine = mod !== 0n && kernel32().GetProcAddress(mod, Buffer.from("wine_get_version\0", "latin1")) !== 0n;
  }
  return wine;
}

/** Alternate data streams other than the unnamed one (FileStreamInformation). */
export function namedStreamCount(h: bigint): number {
  let size = 4096;
  for (;;) {
    const buf = new Uint8Array(size);
    const st = ntdll().NtQueryInformationFile(h, new Uint8Array(16), buf, size, 22) >>> 0;
    if (st === 0x80000005 || st === 0xc0000023) {
      size *= 4; // BUFFER_OVERFLOW / BUFFER_TOO_SMALL
      if (size > 1 << 24) throw new NtError("E2BIG", st, "NtQueryInformationFile");
      continue;
    }
    // FAT/exFAT cannot list streams because they have none (Wine answers the same way)
    if (STATUS[st] === "ENOTSUP" || STATUS[st] === "EINVAL") return 0;
    ntCheck(st, "NtQueryInformationFile");
    const v = new DataView(buf.buffer);
    let off = 0;
    let named = 0;
    // an empty buffer is a directory or a filesystem without streams: nothing named
    if (v.getUint32(4, true) === 0) return 0;
    for (;;) {
      const next = v.getUint32(off, true);
      const name = utf16(buf, off + 24, v.getUint32(off + 4, true));
      if (name !== "::$DATA") named++;
      if (next === 0) return named;
      off += next;
    }
  }
}

/** Extended-attribute bytes on the file (FileEaInformation). */
export function eaSize(h: bigint): number {
  return new DataView(queryInfo(h, 7, 4, "NtQueryInformationFile").buffer).getUint32(0, true);
}

/** The file attributes (FileBasicInformation), and set them (times left as they are). */
export function fileAttributes(h: bigint): number {
  return new DataView(queryInfo(h, 4, 40, "NtQueryInformationFile").buffer).getUint32(32, true);
}
export function setFileAttributes(h: bigint, attributes: number): void {
  const b = new Uint8Array(40);
  // 0 keeps the attributes; FILE_ATTRIBUTE_NORMAL (0x80) is how "none" is spelled
  new DataView(b.buffer).setUint32(32, attributes === 0 ? 0x80 : attributes, true);
  ntCheck(setInfo(h, 4, b, "NtSetInformationFile"), "NtSetInformationFile");
}

/** FILE_RENAME_INFORMATION(_EX): { BOOLEAN replace | ULONG flags; HANDLE root; ULONG len; WCHAR name[] }. */
function renameInfo(flags: number, root: bigint, name: string): Uint8Array {
  const text = Buffer.from(name, "utf16le");
  const b = new Uint8Array(Math.max(24, 20 + text.length));
  const v = new DataView(b.buffer);
  v.setUint32(0, flags, true);
  v.setBigUint64(8, root, true);
  v.setUint32(16, text.length, true);
  b.set(text, 20);
  return b;
}

/**
 * Rename the object behind `h` to `name` in the directory `root`, replacing only when asked.
 * POSIX semantics (FileRenameInformationEx, Windows 10 1709+) replace a target that others hold
 * open with FILE_SHARE_DELETE, as every handle of ours does; the classic call, the fallback where
 * the class is unknown (older Windows, Wine 8), refuses a target that is open at all.
 */
export function renameHandle(h: bigint, root: bigint, name: string, replace: boolean): void {
  const st = setInfo(h, 65 /* FileRenameInformationEx */, renameInfo((replace ? 0x1 : 0) | 0x2, root, name), "NtSetInformationFile");
  if (st === 0) return;
  if (STATUS[st] !== "ENOTSUP" && STATUS[st] !== "EINVAL") ntCheck(st, "NtSetInformationFile");
  ntCheck(setInfo(h, 10 /* FileRenameInformation */, renameInfo(replace ? 1 : 0, root, name), "NtSetInformationFile"), "NtSetInformationFile");
}

/**
 * Mark the object behind `h` for deletion. POSIX semantics (Windows 10 1709+) remove the name at
 * once even while other handles are open; older systems and Wine fall back to the classic
 * disposition, where the name goes when the last handle closes.
 */
export function deleteHandle(h: bigint, ignoreReadOnly = false): void {
  const ex = new Uint8Array(4);
  // DELETE | POSIX_SEMANTICS (| IGNORE_READONLY_ATTRIBUTE, Windows 10 1809+)
  new DataView(ex.buffer).setUint32(0, 0x1 | 0x2 | (ignoreReadOnly ? 0x10 : 0), true);
  const st = setInfo(h, 64 /* FileDispositionInformationEx */, ex, "NtSetInformationFile");
  if (st === 0) return;
  if (STATUS[st] !== "ENOTSUP" && STATUS[st] !== "EINVAL") ntCheck(st, "NtSetInformationFile");
  ntCheck(setInfo(h, 13 /* FileDispositionInformation */, new Uint8Array([1]), "NtSetInformationFile"), "NtSetInformationFile");
}

export function flush(h: bigint): void {
  ntCheck(ntdll().NtFlushBuffersFile(h, new Uint8Array(16)), "NtFlushBuffersFile");
}

export interface NtDirEntry {
  name: string;
  attributes: number;
  /** The reparse tag when `attributes` has FILE_ATTRIBUTE_REPARSE_POINT (it shares the EaSize field). */
  tag: number;
}

/** One batch of FileFullDirectoryInformation entries; null at the end. `restart` on the first call. */
export function queryDirectory(h: bigint, buf: Uint8Array, restart: boolean): NtDirEntry[] | null {
  const st = ntdll().NtQueryDirectoryFile(h, 0n, null, null, new Uint8Array(16), buf, buf.length, 2, 0, null, restart ? 1 : 0) >>> 0;
  if (st === 0x80000006) return null; // NO_MORE_FILES
  ntCheck(st, "NtQueryDirectoryFile");
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: NtDirEntry[] = [];
  let off = 0;
  for (;;) {
    const next = v.getUint32(off, true);
    out.push({ attributes: v.getUint32(off + 56, true), tag: v.getUint32(off + 64, true), name: utf16(buf, off + 68, v.getUint32(off + 60, true)) });
    if (next === 0) return out;
    off += next;
  }
}

/**
 * Bun's node:fs takes libuv descriptors (C runtime fds of Bun's own, statically linked CRT), not
 * HANDLEs. ucrtbase.dll's `_open_osfhandle` would register the handle in a DIFFERENT fd table, so
 * the executable's own exported `uv_open_osfhandle`/`uv_get_osfhandle` are called instead (Bun
 * exports libuv for N-API addons): the descriptor is then a normal one for fstat, read, write and
 * close, and every content path stays shared with Linux and macOS.
 */
let uv: { open: (h: bigint) => number; get: (fd: number) => bigint } | null = null;
function uvBridge(): NonNullable<typeof uv> {
  if (uv !== null) return uv;
  const self = kernel32().GetModuleHandleW(null);
  const sym = (name: string): Pointer => {
    const p = kernel32().GetProcAddress(self, Buffer.from(`${name}\0`, "latin1"));
    if (p === 0n) throw new NtError("ENOSYS", 0xc0000139, `GetProcAddress(${name})`);
    return Number(p) as Pointer;
  };
  const open = CFunction({ ptr: sym("uv_open_osfhandle"), args: [u64], returns: i32 });
  const get = CFunction({ ptr: sym("uv_get_osfhandle"), args: [i32], returns: u64 });
  uv = { open: (h) => open(h) as number, get: (fd) => BigInt(get(fd) as number | bigint) };
  return uv;
}

/** Hand a HANDLE over to a node:fs descriptor (closing the descriptor closes the handle). */
export function toFd(h: bigint): number {
  const fd = uvBridge().open(h);
  if (fd < 0) {
    ntClose(h);
    throw new NtError("EMFILE", 0xc000011f, "uv_open_osfhandle");
  }
  return fd;
}

/** The HANDLE behind a descriptor (still owned by the descriptor). */
export function handleOf(fd: number): bigint {
  const h = uvBridge().get(fd);
  if (h === 0xffffffffffffffffn || h === 0n) throw new NtError("EBADF", 0xc0000008, "uv_get_osfhandle");
  return h;
}
