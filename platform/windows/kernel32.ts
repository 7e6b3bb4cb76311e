// kernel32/ntdll/advapi32 functions for the Windows platform layer, bound lazily through bun:ffi.
// HANDLEs travel as u64 (BigInt), never as ptr (Bun's docs). Structs are Uint8Arrays passed by ptr().
import { dlopen, FFIType } from "bun:ffi";

const kernel32Symbols = {
  CreateJobObjectW: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.u64 },
  SetInformationJobObject: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
  QueryInformationJobObject: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  AssignProcessToJobObject: { args: [FFIType.u64, FFIType.u64], returns: FFIType.i32 },
  TerminateJobObject: { args: [FFIType.u64, FFIType.u32], returns: FFIType.i32 },
  OpenProcess: { args: [FFIType.u32, FFIType.i32, FFIType.u32], returns: FFIType.u64 },
  GetCurrentProcess: { args: [], returns: FFIType.u64 },
  GetProcessTimes: { args: [FFIType.u64, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  GetExitCodeProcess: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  ReadProcessMemory: { args: [FFIType.u64, FFIType.u64, FFIType.ptr, FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  TerminateProcess: { args: [FFIType.u64, FFIType.u32], returns: FFIType.i32 },
  CreateToolhelp32Snapshot: { args: [FFIType.u32, FFIType.u32], returns: FFIType.u64 },
  Process32FirstW: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  Process32NextW: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  CloseHandle: { args: [FFIType.u64], returns: FFIType.i32 },
  GetLastError: { args: [], returns: FFIType.u32 },
  CreateFileW: {
    args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.u64],
    returns: FFIType.u64,
  },
  GetFileInformationByHandle: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
  LockFileEx: { args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  UnlockFileEx: { args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  LocalFree: { args: [FFIType.u64], returns: FFIType.u64 },
} as const;

const ntdllSymbols = {
  /** Returns an NTSTATUS (0 is success); ProcessBasicInformation needs only PROCESS_QUERY_LIMITED_INFORMATION. */
  NtQueryInformationProcess: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
} as const;

const advapi32Symbols = {
  OpenProcessToken: { args: [FFIType.u64, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  GetTokenInformation: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
  ConvertSidToStringSidW: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
} as const;

type Kernel32 = ReturnType<typeof dlopen<typeof kernel32Symbols>>["symbols"];
type Advapi32 = ReturnType<typeof dlopen<typeof advapi32Symbols>>["symbols"];
type Ntdll = ReturnType<typeof dlopen<typeof ntdllSymbols>>["symbols"];
let k32: Kernel32 | null = null;
let nt: Ntdll | null = null;
let adv: Advapi32 | null = null;

export function kernel32(): Kernel32 {
  if (k32 === null) k32 = dlopen("kernel32.dll", kernel32Symbols).symbols;
  return k32;
}

export function ntdll(): Ntdll {
  if (nt === null) nt = dlopen("ntdll.dll", ntdllSymbols).symbols;
  return nt;
}

export function advapi32(): Advapi32 {
  if (adv === null) adv = dlopen("advapi32.dll", advapi32Symbols).symbols;
  return adv;
}

export const INVALID_HANDLE_VALUE = 0xffffffffffffffffn;

/** NUL-terminated UTF-16LE for W APIs. */
export function wide(text: string): Uint16Array {
  const out = new Uint16Array(text.length + 1);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
