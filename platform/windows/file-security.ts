// A private file's security on Windows, where POSIX mode bits do not exist (Bun synthesises them):
// who owns it and who its DACL admits, read as SDDL, and a protected DACL that admits the current
// user only, set on a file we just created. The verdict on an SDDL is pure (./private-sddl.ts).
// No function here throws: the caller (platform/token.ts) decides the error.
import { ptr } from "bun:ffi";
import { wide } from "./kernel32.ts";
import { advapi, DACL_SECURITY_INFORMATION, descriptorSddl, OWNER_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, withSddlDacl } from "./security-descriptor.ts";

const SE_FILE_OBJECT = 1;

/** The file's owner and DACL as SDDL (`O:<sid>D:<acl>`), or null when they cannot be read. */
export function fileSecuritySddl(file: string): string | null {
  const info = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
  const owner = new BigUint64Array(1);
  const dacl = new BigUint64Array(1);
  const descriptor = new BigUint64Array(1);
  if (advapi().GetNamedSecurityInfoW(ptr(wide(file)), SE_FILE_OBJECT, info, ptr(owner), null, ptr(dacl), null, ptr(descriptor)) !== 0) return null;
  return descriptorSddl(descriptor[0]!, info);
}

/** Replaces the file's DACL with the protected one in `sddl` (`D:P(...)`). False when it could not. */
export function setFileDacl(file: string, sddl: string): boolean {
  const info = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
  return withSddlDacl(sddl, (dacl) => advapi().SetNamedSecurityInfoW(ptr(wide(file)), SE_FILE_OBJECT, info, 0n, 0n, dacl, 0n) === 0) ?? false;
}
