// The Win32 and NT calls behind the Bridge's own named-pipe transport (./pipe-stream.ts and its
// I/O thread, ./pipe-io-worker.ts), bound once per thread. Reads, writes and listens go through
// the NT calls, which return their NTSTATUS directly, and a finished operation's status is read
// from its OVERLAPPED (the IO_STATUS_BLOCK at its head): no GetLastError anywhere on the I/O path.
//
// Everything an operation in flight points at (OVERLAPPED, data buffer) lives on the process heap,
// never in a JavaScript buffer the collector may move or free while the kernel still writes to it.
import { dlopen, FFIType, ptr, read, toArrayBuffer } from "bun:ffi";

const symbols = {
  CreateNamedPipeW: {
    args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.ptr],
    returns: FFIType.u64,
  },
  CreateIoCompletionPort: { args: [FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u32], returns: FFIType.u64 },
  GetQueuedCompletionStatus: { args: [FFIType.u64, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  PostQueuedCompletionStatus: { args: [FFIType.u64, FFIType.u32, FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  GetNamedPipeClientProcessId: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  GetNamedPipeServerProcessId: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  CancelIoEx: { args: [FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  CloseHandle: { args: [FFIType.u64], returns: FFIType.i32 },
  GetProcessHeap: { args: [], returns: FFIType.u64 },
  HeapAlloc: { args: [FFIType.u64, FFIType.u32, FFIType.u64], returns: FFIType.u64 },
  HeapFree: { args: [FFIType.u64, FFIType.u32, FFIType.u64], returns: FFIType.i32 },
} as const;

const ntSymbols = {
  NtCreateFile: {
    args: [FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.u32],
    returns: FFIType.u32,
  },
  NtReadFile: {
    args: [FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u32, FFIType.u64, FFIType.u64],
    returns: FFIType.u32,
  },
  NtWriteFile: {
    args: [FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u32, FFIType.u64, FFIType.u64],
    returns: FFIType.u32,
  },
  NtFsControlFile: {
    args: [FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u32, FFIType.u64, FFIType.u32, FFIType.u64, FFIType.u32],
    returns: FFIType.u32,
  },
} as const;

type Win32 = ReturnType<typeof dlopen<typeof symbols>>["symbols"];
type Nt = ReturnType<typeof dlopen<typeof ntSymbols>>["symbols"];
let win32: Win32 | null = null;
let nt: Nt | null = null;
export const pipeWin32 = (): Win32 => (win32 ??= dlopen("kernel32.dll", symbols).symbols);
export const pipeNt = (): Nt => (nt ??= dlopen("ntdll.dll", ntSymbols).symbols);

export const INVALID_HANDLE = 0xffffffffffffffffn;
export const INFINITE = 0xffffffff;

export const PIPE_ACCESS_DUPLEX = 0x3;
export const FILE_FLAG_OVERLAPPED = 0x40000000;
export const FILE_FLAG_FIRST_PIPE_INSTANCE = 0x00080000;
export const PIPE_TYPE_BYTE = 0x0;
export const PIPE_READMODE_BYTE = 0x0;
export const PIPE_WAIT = 0x0;
export const PIPE_REJECT_REMOTE_CLIENTS = 0x8;
export const PIPE_UNLIMITED_INSTANCES = 255;
export const FSCTL_PIPE_LISTEN = 0x00110008;

export const STATUS_SUCCESS = 0;
export const STATUS_PENDING = 0x103;
export const STATUS_PIPE_CONNECTED = 0xc00000b2;
export const STATUS_CANCELLED = 0xc0000120;

export const STATUS_OBJECT_NAME_NOT_FOUND = 0xc0000034;
/** Every instance of the pipe is connected to someone: the server will add one, try again. */
export const STATUS_PIPE_NOT_AVAILABLE = 0xc00000ac;
export const STATUS_PIPE_BUSY = 0xc00000ae;
export const STATUS_INSTANCE_NOT_AVAILABLE = 0xc00000ab;
export const STATUS_ACCESS_DENIED = 0xc0000022;

/** Control packets (main thread -> I/O thread) carry this bit in their completion key. */
export const CONTROL_BIT = 1n << 62n;
export const enum Op {
  /** Argument: a server instance's handle. Wait for a client, then read. */
  AdoptServer = 1,
  /** Argument: a connected client handle. Read. */
  AdoptClient = 2,
  /** The main thread has taken the last chunk: read the next. */
  ReadMore = 3,
  /** Cancel everything on the handle and close it; "released" follows once nothing points at our memory. */
  Close = 4,
}
/** One read or one write moves at most this much. */
export const READ_CHUNK_BYTES = 65536;
export const WRITE_CHUNK_BYTES = 65536;

/**
 * Delivery counters shared by the two threads: [POSTED] messages the I/O thread sent, [SEEN] those
 * the main thread handled. While SEEN lags POSTED the I/O thread waits at most NUDGE_AFTER_MS and
 * then posts an extra "nudge" message, a guard against a message Bun leaves undelivered. It is a
 * guard, not a measured fix: the one stall found (under Wine, Bun 1.4.4) was bun:test's
 * expect().rejects waiting in a nested loop that delivers no worker messages, which no nudge helps.
 */
export const POSTED = 0;
export const SEEN = 1;
/** How long the I/O thread waits for SEEN to catch up before it nudges. */
export const NUDGE_AFTER_MS = 20;

/** What the I/O thread reports (see ./pipe-io-worker.ts). */
export type FromPipeIo =
  | { t: "ready"; port: string; counters: SharedArrayBuffer }
  | { t: "nudge" }
  | { t: "connected"; id: number }
  | { t: "data"; id: number; bytes: ArrayBuffer }
  | { t: "eof"; id: number; status: number }
  | { t: "written"; id: number; overlapped: number; status: number; bytes: number }
  | { t: "released"; id: number };

/** NT_ERROR: the operation failed at once and no completion packet will follow. */
export const isNtError = (status: number): boolean => status >>> 30 === 3;

/** OVERLAPPED (x64): Internal, InternalHigh (together an IO_STATUS_BLOCK), Offset, OffsetHigh, hEvent. */
export const OVERLAPPED_BYTES = 32;
/** Where an OVERLAPPED's byte offset (a LARGE_INTEGER, always 0 for a pipe) sits. */
export const OFFSET_FIELD = 16;

/** The NTSTATUS and byte count a finished operation left in its OVERLAPPED. */
export function overlappedResult(overlapped: number): { status: number; bytes: number } {
  return { status: read.u32(overlapped as never, 0), bytes: Number(read.u64(overlapped as never, 8)) };
}

/** Zeroed process-heap memory; the caller frees it with freeNative once no operation points at it. */
export function allocNative(bytes: number): number {
  const k = pipeWin32();
  const HEAP_ZERO_MEMORY = 0x8;
  const address = k.HeapAlloc(k.GetProcessHeap(), HEAP_ZERO_MEMORY, BigInt(bytes));
  if (address === 0n) throw new RangeError("out of memory for a pipe buffer");
  return Number(address);
}

export function freeNative(address: number): void {
  const k = pipeWin32();
  k.HeapFree(k.GetProcessHeap(), 0, BigInt(address));
}

/** A view of native memory (no copy): valid only until it is freed. */
export function nativeBytes(address: number, length: number): Uint8Array {
  return new Uint8Array(toArrayBuffer(address as never, 0, length));
}

/** Starts a read of up to `length` bytes into `buffer`; its completion goes to the handle's port. */
export function startRead(handle: bigint, overlapped: number, buffer: number, length: number): number {
  const ov = BigInt(overlapped);
  return pipeNt().NtReadFile(handle, 0n, 0n, ov, ov, BigInt(buffer), length, ov + BigInt(OFFSET_FIELD), 0n);
}

export function startWrite(handle: bigint, overlapped: number, buffer: number, length: number): number {
  const ov = BigInt(overlapped);
  return pipeNt().NtWriteFile(handle, 0n, 0n, ov, ov, BigInt(buffer), length, ov + BigInt(OFFSET_FIELD), 0n);
}

/** Waits for a client on a server instance (ConnectNamedPipe); STATUS_PIPE_CONNECTED: one already is. */
export function startListen(handle: bigint, overlapped: number): number {
  const ov = BigInt(overlapped);
  return pipeNt().NtFsControlFile(handle, 0n, 0n, ov, ov, FSCTL_PIPE_LISTEN, 0n, 0, 0n, 0);
}

/**
 * Opens the client end of a pipe as one NtCreateFile (the NTSTATUS of this very call, never a
 * later GetLastError): read/write, overlapped (no FILE_SYNCHRONOUS_IO_*), and with a security
 * quality of service of SecurityIdentification, static tracking: the server can learn who we
 * are but never impersonate us. `ntPath` is the NT spelling, `\??\pipe\<name>`.
 */
export function openPipeClient(ntPath: string): { handle: bigint } | { status: number } {
  const READ_WRITE = 0x0012019f; // FILE_GENERIC_READ | FILE_GENERIC_WRITE
  const FILE_OPEN = 1;
  const FILE_NON_DIRECTORY_FILE = 0x40;
  const OBJ_CASE_INSENSITIVE = 0x40;
  const SecurityIdentification = 1;
  const text = Buffer.from(ntPath, "utf16le");
  const name = new Uint8Array(16);
  const nameView = new DataView(name.buffer);
  nameView.setUint16(0, text.length, true);
  nameView.setUint16(2, text.length, true);
  nameView.setBigUint64(8, BigInt(ptr(text)), true);
  // SECURITY_QUALITY_OF_SERVICE { DWORD Length; level; BOOLEAN tracking; BOOLEAN effectiveOnly }
  const qos = new Uint8Array(12);
  const qosView = new DataView(qos.buffer);
  qosView.setUint32(0, 12, true);
  qosView.setUint32(4, SecurityIdentification, true);
  const attributes = new Uint8Array(48);
  const view = new DataView(attributes.buffer);
  view.setUint32(0, 48, true);
  view.setBigUint64(16, BigInt(ptr(name)), true);
  view.setUint32(24, OBJ_CASE_INSENSITIVE, true);
  view.setBigUint64(40, BigInt(ptr(qos)), true);
  const out = new BigUint64Array(1);
  const status = pipeNt().NtCreateFile(out, READ_WRITE, attributes, new Uint8Array(16), null, 0, 0, FILE_OPEN, FILE_NON_DIRECTORY_FILE, null, 0);
  return status >>> 0 < 0x80000000 ? { handle: out[0]! } : { status: status >>> 0 };
}
