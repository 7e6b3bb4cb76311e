// ntdll calls beyond the file walk (platform/fs/windows.ts): byte-range locks and process opens.
// Each returns its NTSTATUS from the same native call, so no result depends on a GetLastError read
// in a later FFI call, after JavaScript (and whatever Win32 calls the runtime made meanwhile) ran.
import { dlopen, FFIType } from "bun:ffi";

const { u64, u32, i32, ptr: P } = FFIType;

function load() {
  return dlopen("ntdll.dll", {
    NtLockFile: { args: [u64, u64, P, P, P, P, P, u32, u32, u32], returns: i32 },
    NtUnlockFile: { args: [u64, P, P, P, u32], returns: i32 },
    NtOpenProcess: { args: [P, u32, P, P], returns: i32 },
  }).symbols;
}
let lib: ReturnType<typeof load> | null = null;
const ntdll = (): ReturnType<typeof load> => (lib ??= load());

export const STATUS_LOCK_NOT_GRANTED = 0xc0000055;
/** Wine answers a held range with this one (measured with Wine 8.0); Win32 maps both to ERROR_LOCK_VIOLATION. */
export const STATUS_FILE_LOCK_CONFLICT = 0xc0000054;
const STATUS_NOT_IMPLEMENTED = 0xc0000002;
export const STATUS_INVALID_CID = 0xc000000b;
export const STATUS_INVALID_PARAMETER = 0xc000000d;

function range(offset: bigint, length: bigint): [BigInt64Array, BigInt64Array] {
  return [new BigInt64Array([offset]), new BigInt64Array([length])];
}

/** NtLockFile, exclusive, never waiting, on a handle opened for synchronous I/O; the NTSTATUS. */
export function lockExclusiveNoWait(h: bigint, offset: bigint, length: bigint): number {
  const [off, len] = range(offset, length);
  const st = ntdll().NtLockFile(h, 0n, null, null, new Uint8Array(16), off, len, 0, 1, 1) >>> 0;
  // Windows requires the IO_STATUS_BLOCK; Wine 8 refuses one (STATUS_NOT_IMPLEMENTED, measured)
  // and takes NULL, as its own LockFileEx passes
  if (st !== STATUS_NOT_IMPLEMENTED) return st;
  return ntdll().NtLockFile(h, 0n, null, null, null, off, len, 0, 1, 1) >>> 0;
}

export function unlock(h: bigint, offset: bigint, length: bigint): number {
  const [off, len] = range(offset, length);
  const st = ntdll().NtUnlockFile(h, new Uint8Array(16), off, len, 0) >>> 0;
  return st !== STATUS_NOT_IMPLEMENTED ? st : ntdll().NtUnlockFile(h, null, off, len, 0) >>> 0;
}

/** NtOpenProcess by pid: the handle, or the NTSTATUS it failed with. */
export function openProcess(pid: number, access: number): { handle: bigint } | { status: number } {
  const out = new BigUint64Array(1);
  const oa = new Uint8Array(48);
  new DataView(oa.buffer).setUint32(0, 48, true);
  const cid = new BigUint64Array([BigInt(pid), 0n]); // CLIENT_ID { UniqueProcess, UniqueThread }
  const st = ntdll().NtOpenProcess(out, access, oa, cid) >>> 0;
  return st < 0x80000000 ? { handle: out[0] as bigint } : { status: st };
}
