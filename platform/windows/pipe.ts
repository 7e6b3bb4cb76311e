// The Bridge pipe's neighbours on Windows: whether a pipe name is already held by someone, and the
// current user's SID, which the pipe's DACL (./pipe-dacl.ts) and the token file's privacy check
// (../token.ts) name. The pipe's name itself derives from the state directory, not from the user:
// it only disambiguates, anyone can compute it, and the handshake over the token
// (src/bridge/ipc/handshake.ts) is what authenticates both ends.
import { dlopen, FFIType, ptr, read } from "bun:ffi";
import { platformError } from "../errors.ts";
import { advapi32, kernel32, wide } from "./kernel32.ts";

const ERROR_FILE_NOT_FOUND = 2;
export const PIPE_PREFIX = "\\\\.\\pipe\\";

/** Whether `path` names a Windows pipe (elsewhere it is a unix socket path). */
export function isPipePath(path: string): boolean {
  return path.toLowerCase().startsWith(PIPE_PREFIX);
}

let waitNamedPipe: ((name: unknown, timeoutMs: number) => number) | null = null;

/**
 * Whether a named pipe of this name exists now, whoever created it; WaitNamedPipeW answers without
 * connecting to it. Anything but "no such pipe" counts as held (fail closed). A path that is not a
 * pipe name is never held here: it is a unix socket path, where listen reports EADDRINUSE itself.
 */
export function pipeNameHeld(pipePath: string): boolean {
  if (!isPipePath(pipePath)) return false;
  const k = kernel32();
  waitNamedPipe ??= dlopen("kernel32.dll", { WaitNamedPipeW: { args: [FFIType.ptr, FFIType.u32], returns: FFIType.i32 } }).symbols.WaitNamedPipeW as never;
  if (waitNamedPipe!(ptr(wide(pipePath)), 1) !== 0) return true;
  return k.GetLastError() !== ERROR_FILE_NOT_FOUND;
}

const TOKEN_QUERY = 0x0008;
const TokenUser = 1;
const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;

/** The current user's SID as a string (S-1-5-21-...). */
export function currentUserSid(): string {
  const sid = tokenUserSid(kernel32().GetCurrentProcess());
  if (sid === null) throw platformError("BRIDGE_IDENTITY_UNAVAILABLE", "cannot read the current user's SID");
  return sid;
}

/**
 * The SID of the user another process runs as (a pipe peer), or null when it cannot be read: the
 * process is gone, or belongs to someone whose processes we may not query, which a caller deciding
 * whether to trust that peer treats as "not us".
 */
export function processUserSid(pid: number): string | null {
  const k = kernel32();
  const process = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
  if (process === 0n) return null;
  try {
    return tokenUserSid(process);
  } finally {
    k.CloseHandle(process);
  }
}

function tokenUserSid(process: bigint): string | null {
  const k = kernel32();
  const a = advapi32();
  const tokenHandle = new BigUint64Array(1);
  if (a.OpenProcessToken(process, TOKEN_QUERY, ptr(tokenHandle)) === 0) return null;
  try {
    const info = new Uint8Array(256);
    const length = new Uint32Array(1);
    if (a.GetTokenInformation(tokenHandle[0]!, TokenUser, ptr(info), info.length, ptr(length)) === 0) return null;
    // TOKEN_USER starts with SID_AND_ATTRIBUTES { PSID Sid; DWORD Attributes }.
    const sidPointer = new DataView(info.buffer).getBigUint64(0, true);
    const out = new BigUint64Array(1);
    if (a.ConvertSidToStringSidW(sidPointer, ptr(out)) === 0) return null;
    const text = Number(out[0]!);
    let sid = "";
    for (let offset = 0; offset < 512; offset += 2) {
      const unit = read.u16(text as never, offset);
      if (unit === 0) break;
      sid += String.fromCharCode(unit);
    }
    k.LocalFree(out[0]!);
    return sid;
  } finally {
    k.CloseHandle(tokenHandle[0]!);
  }
}
