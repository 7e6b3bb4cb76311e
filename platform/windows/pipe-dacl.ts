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
import { ptr } from "bun:ffi";
import { currentUserSid } from "./pipe.ts";
import { INVALID_HANDLE_VALUE, kernel32, wide } from "./kernel32.ts";
import { advapi, DACL_SECURITY_INFORMATION, descriptorSddl, PROTECTED_DACL_SECURITY_INFORMATION, withSddlDacl } from "./security-descriptor.ts";

const READ_CONTROL = 0x00020000;
const WRITE_DAC = 0x00040000;
const OPEN_EXISTING = 3;
const SE_KERNEL_OBJECT = 6;

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
  let sddl: string;
  try {
    sddl = pipeSddlFor(currentUserSid());
  } catch {
    return false;
  }
  const info = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
  const set = withSddlDacl(sddl, (dacl) => {
    const handle = openPipe(pipePath, READ_CONTROL | WRITE_DAC);
    if (handle === null) return false;
    try {
      return advapi().SetSecurityInfo(handle, SE_KERNEL_OBJECT, info, 0n, 0n, dacl, 0n) === 0;
    } finally {
      kernel32().CloseHandle(handle);
    }
  });
  return set ?? false;
}

/** The pipe's DACL as SDDL, read through a fresh client handle (GetSecurityInfo), or null. */
export function pipeDaclSddl(pipePath: string): string | null {
  const handle = openPipe(pipePath, READ_CONTROL);
  if (handle === null) return null;
  try {
    const dacl = new BigUint64Array(1);
    const descriptor = new BigUint64Array(1);
    if (advapi().GetSecurityInfo(handle, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, null, null, ptr(dacl), null, ptr(descriptor)) !== 0) return null;
    return descriptorSddl(descriptor[0]!, DACL_SECURITY_INFORMATION);
  } finally {
    kernel32().CloseHandle(handle);
  }
}
