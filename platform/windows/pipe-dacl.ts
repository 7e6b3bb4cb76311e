// The Bridge pipe's DACL: the current user only, and never over a network logon; nobody else, not
// even Administrators or SYSTEM, which a default pipe DACL lets in, alongside read access for
// Everyone and Anonymous. serverfs creates the pipe with it (./pipe-stream.ts), so no instance
// ever exists under the default DACL. The entry order matters: the deny for NETWORK (NU) comes
// first, so a network logon of the same user is refused although the allow names that user.
// Reading a pipe's DACL back, for the tests and for doctor, is here too.
// No function here throws except pipeSddl, which needs the current user's SID.
import { ptr } from "bun:ffi";
import { currentUserSid } from "./pipe.ts";
import { INVALID_HANDLE_VALUE, kernel32, wide } from "./kernel32.ts";
import { advapi, DACL_SECURITY_INFORMATION, descriptorSddl } from "./security-descriptor.ts";

const READ_CONTROL = 0x00020000;
const OPEN_EXISTING = 3;
const SE_KERNEL_OBJECT = 6;

/** The SDDL of the Bridge pipe for `sid`: protected, network logons denied, `sid` allowed all. */
export function pipeSddlFor(sid: string): string {
  return `D:P(D;;GA;;;NU)(A;;GA;;;${sid})`;
}

/** The Bridge pipe's SDDL for the current user (throws BRIDGE_IDENTITY_UNAVAILABLE without a SID). */
export function pipeSddl(): string {
  return pipeSddlFor(currentUserSid());
}

/** The pipe's DACL as SDDL, read through a fresh client handle (GetSecurityInfo), or null. */
export function pipeDaclSddl(pipePath: string): string | null {
  const handle = kernel32().CreateFileW(ptr(wide(pipePath)), READ_CONTROL, 0, null, OPEN_EXISTING, 0, 0n);
  if (handle === INVALID_HANDLE_VALUE || handle === 0n) return null;
  try {
    const dacl = new BigUint64Array(1);
    const descriptor = new BigUint64Array(1);
    if (advapi().GetSecurityInfo(handle, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION, null, null, ptr(dacl), null, ptr(descriptor)) !== 0) return null;
    return descriptorSddl(descriptor[0]!, DACL_SECURITY_INFORMATION);
  } finally {
    kernel32().CloseHandle(handle);
  }
}
