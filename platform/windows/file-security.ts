// A private file's security on Windows, where POSIX mode bits do not exist (Bun synthesises them):
// who owns it and who its DACL admits, read as SDDL, and a protected DACL that admits the current
// user only, set on a file we just created. The verdict on an SDDL is pure (./private-sddl.ts).
// No function here throws: the caller (platform/token.ts) decides the error.
import { dlopen, FFIType, ptr, read } from "bun:ffi";
import { kernel32, wide } from "./kernel32.ts";

const SE_FILE_OBJECT = 1;
const OWNER_SECURITY_INFORMATION = 0x1;
const DACL_SECURITY_INFORMATION = 0x4;
const PROTECTED_DACL_SECURITY_INFORMATION = 0x80000000;
const SDDL_REVISION_1 = 1;

const symbols = {
  GetNamedSecurityInfoW: {
    args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr],
    returns: FFIType.u32,
  },
  SetNamedSecurityInfoW: {
    args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64],
    returns: FFIType.u32,
  },
  ConvertStringSecurityDescriptorToSecurityDescriptorW: { args: [FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  ConvertSecurityDescriptorToStringSecurityDescriptorW: {
    args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr],
    returns: FFIType.i32,
  },
  GetSecurityDescriptorDacl: { args: [FFIType.u64, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
} as const;
type Symbols = ReturnType<typeof dlopen<typeof symbols>>["symbols"];
let loaded: Symbols | null = null;
const sec = (): Symbols => (loaded ??= dlopen("advapi32.dll", symbols).symbols);

function wideString(address: bigint, maxUnits: number): string {
  let out = "";
  for (let offset = 0; offset < maxUnits * 2; offset += 2) {
    const unit = read.u16(Number(address) as never, offset);
    if (unit === 0) break;
    out += String.fromCharCode(unit);
  }
  return out;
}

/** The file's owner and DACL as SDDL (`O:<sid>D:<acl>`), or null when they cannot be read. */
export function fileSecuritySddl(file: string): string | null {
  const k = kernel32();
  const info = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION;
  const owner = new BigUint64Array(1);
  const dacl = new BigUint64Array(1);
  const descriptor = new BigUint64Array(1);
  if (sec().GetNamedSecurityInfoW(ptr(wide(file)), SE_FILE_OBJECT, info, ptr(owner), null, ptr(dacl), null, ptr(descriptor)) !== 0) {
    return null;
  }
  try {
    const text = new BigUint64Array(1);
    if (sec().ConvertSecurityDescriptorToStringSecurityDescriptorW(descriptor[0]!, SDDL_REVISION_1, info, ptr(text), null) === 0) {
      return null;
    }
    try {
      return wideString(text[0]!, 65536);
    } finally {
      k.LocalFree(text[0]!);
    }
  } finally {
    k.LocalFree(descriptor[0]!);
  }
}

/** Replaces the file's DACL with the protected one in `sddl` (`D:P(...)`). False when it could not. */
export function setFileDacl(file: string, sddl: string): boolean {
  const k = kernel32();
  const descriptor = new BigUint64Array(1);
  if (sec().ConvertStringSecurityDescriptorToSecurityDescriptorW(ptr(wide(sddl)), SDDL_REVISION_1, ptr(descriptor), null) === 0) {
    return false;
  }
  try {
    const present = new Int32Array(1);
    const dacl = new BigUint64Array(1);
    const defaulted = new Int32Array(1);
    if (sec().GetSecurityDescriptorDacl(descriptor[0]!, ptr(present), ptr(dacl), ptr(defaulted)) === 0 || present[0] === 0) return false;
    const info = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
    return sec().SetNamedSecurityInfoW(ptr(wide(file)), SE_FILE_OBJECT, info, 0n, 0n, dacl[0]!, 0n) === 0;
  } finally {
    k.LocalFree(descriptor[0]!);
  }
}
