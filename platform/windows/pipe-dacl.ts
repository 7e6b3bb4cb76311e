// The Bridge pipe's DACL: only the current user, nobody else (not even Administrators or SYSTEM,
// which a default pipe DACL lets in, alongside read access for Everyone).
//
// Bun creates the pipe itself (node:net → libuv, CreateNamedPipeW with no SECURITY_ATTRIBUTES and
// FILE_FLAG_FIRST_PIPE_INSTANCE, so we cannot create the first instance for it), and gives us no
// handle. A pipe's security descriptor belongs to the pipe, not to one instance, so we open the
// just-created pipe once as a client for READ_CONTROL|WRITE_DAC (the creator owns it), replace its
// DACL with a protected one built from SDDL `D:P(A;;GA;;;<user SID>)`, and close that handle: every
// later connection and every instance libuv adds is checked against it. Until then, the token
// check (../token.ts) is what keeps other users out.
// No function here throws: the caller (the Bridge endpoint) decides the error.
import { dlopen, FFIType, ptr, read } from "bun:ffi";
import { currentUserSid } from "./pipe.ts";
import { INVALID_HANDLE_VALUE, kernel32, wide } from "./kernel32.ts";

const READ_CONTROL = 0x00020000;
const WRITE_DAC = 0x00040000;
const OPEN_EXISTING = 3;
const SE_KERNEL_OBJECT = 6;
const DACL_SECURITY_INFORMATION = 0x4;
const PROTECTED_DACL_SECURITY_INFORMATION = 0x80000000;
const SDDL_REVISION_1 = 1;

const securitySymbols = {
  ConvertStringSecurityDescriptorToSecurityDescriptorW: { args: [FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  ConvertSecurityDescriptorToStringSecurityDescriptorW: {
    args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr],
    returns: FFIType.i32,
  },
  GetSecurityDescriptorDacl: { args: [FFIType.u64, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  SetSecurityInfo: { args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.u32 },
  GetSecurityInfo: { args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.u32 },
} as const;
type Security = ReturnType<typeof dlopen<typeof securitySymbols>>["symbols"];
let security: Security | null = null;
const sec = (): Security => (security ??= dlopen("advapi32.dll", securitySymbols).symbols);

/** The SDDL the Bridge pipe carries: a protected DACL with one allow-all entry for `sid`. */
export function pipeSddlFor(sid: string): string {
  return `D:P(A;;GA;;;${sid})`;
}

function openPipe(pipePath: string, access: number): bigint | null {
  const handle = kernel32().CreateFileW(ptr(wide(pipePath)), access, 0, null, OPEN_EXISTING, 0, 0n);
  return handle === INVALID_HANDLE_VALUE || handle === 0n ? null : handle;
}

/** Replaces the listening pipe's DACL with the current user's only. False when it could not. */
export function restrictPipeToCurrentUser(pipePath: string): boolean {
  const k = kernel32();
  let sddl: string;
  try {
    sddl = pipeSddlFor(currentUserSid());
  } catch {
    return false;
  }
  const descriptor = new BigUint64Array(1);
  if (sec().ConvertStringSecurityDescriptorToSecurityDescriptorW(ptr(wide(sddl)), SDDL_REVISION_1, ptr(descriptor), null) === 0) {
    return false;
  }
  try {
    const present = new Int32Array(1);
    const dacl = new BigUint64Array(1);
    const defaulted = new Int32Array(1);
    if (sec().GetSecurityDescriptorDacl(descriptor[0]!, ptr(present), ptr(dacl), ptr(defaulted)) === 0 || present[0] === 0) {
      return false;
    }
    const handle = openPipe(pipePath, READ_CONTROL | WRITE_DAC);
    if (handle === null) return false;
    try {
      const info = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
      return sec().SetSecurityInfo(handle, SE_KERNEL_OBJECT, info, 0n, 0n, dacl[0]!, 0n) === 0;
    } finally {
      k.CloseHandle(handle);
    }
  } finally {
    k.LocalFree(descriptor[0]!);
  }
}

/** The pipe's DACL as SDDL, read through a fresh client handle (GetSecurityInfo), or null. */
export function pipeDaclSddl(pipePath: string): string | null {
  const k = kernel32();
  const handle = openPipe(pipePath, READ_CONTROL);
  if (handle === null) return null;
  try {
    const dacl = new BigUint64Array(1);
    const descriptor = new BigUint64Array(1);
    if (sec().GetSecurityInfo(handle, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, null, null, ptr(dacl), null, ptr(descriptor)) !== 0) {
      return null;
    }
    try {
      const text = new BigUint64Array(1);
      if (sec().ConvertSecurityDescriptorToStringSecurityDescriptorW(descriptor[0]!, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, ptr(text), null) === 0) {
        return null;
      }
      let out = "";
      for (let offset = 0; offset < 8192; offset += 2) {
        const unit = read.u16(Number(text[0]!) as never, offset);
        if (unit === 0) break;
        out += String.fromCharCode(unit);
      }
      k.LocalFree(text[0]!);
      return out;
    } finally {
      k.LocalFree(descriptor[0]!);
    }
  } finally {
    k.CloseHandle(handle);
  }
}
