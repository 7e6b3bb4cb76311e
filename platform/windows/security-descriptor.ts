// Security descriptors as SDDL, both ways, for the two kinds of object serverfs secures on Windows
// (the Bridge pipe: ./pipe-dacl.ts; private files such as the Bridge token: ./file-security.ts).
// One set of advapi32 bindings; every descriptor and string the system allocates is freed here.
// No function here throws: callers decide the error.
import { dlopen, FFIType, ptr, read } from "bun:ffi";
import { kernel32, wide } from "./kernel32.ts";

export const OWNER_SECURITY_INFORMATION = 0x1;
export const DACL_SECURITY_INFORMATION = 0x4;
export const PROTECTED_DACL_SECURITY_INFORMATION = 0x80000000;
const SDDL_REVISION_1 = 1;
/** Longest SDDL read back, in UTF-16 units (a bound on the loop, far above any real DACL). */
const MAX_SDDL_UNITS = 65536;

const symbols = {
  ConvertStringSecurityDescriptorToSecurityDescriptorW: { args: [FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  ConvertSecurityDescriptorToStringSecurityDescriptorW: {
    args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr],
    returns: FFIType.i32,
  },
  GetSecurityDescriptorDacl: { args: [FFIType.u64, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  GetNamedSecurityInfoW: {
    args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr],
    returns: FFIType.u32,
  },
  SetNamedSecurityInfoW: {
    args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64],
    returns: FFIType.u32,
  },
  SetSecurityInfo: { args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.u32 },
  GetSecurityInfo: { args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.u32 },
} as const;
type Advapi = ReturnType<typeof dlopen<typeof symbols>>["symbols"];
let loaded: Advapi | null = null;
/** advapi32's security calls, bound on first use. */
export const advapi = (): Advapi => (loaded ??= dlopen("advapi32.dll", symbols).symbols);

/**
 * The self-relative descriptor `sddl` describes, for a SECURITY_ATTRIBUTES that must outlive one
 * call (the Bridge pipe's instances); null when the SDDL does not convert. Free it once.
 */
export function sddlDescriptor(sddl: string): { address: bigint; free: () => void } | null {
  const descriptor = new BigUint64Array(1);
  if (advapi().ConvertStringSecurityDescriptorToSecurityDescriptorW(ptr(wide(sddl)), SDDL_REVISION_1, ptr(descriptor), null) === 0) return null;
  let freed = false;
  return {
    address: descriptor[0]!,
    free: () => {
      if (freed) return;
      freed = true;
      kernel32().LocalFree(descriptor[0]!);
    },
  };
}

/** `use(dacl)` with the DACL of the descriptor `sddl` describes; null when the SDDL does not convert or holds no DACL. */
export function withSddlDacl<T>(sddl: string, use: (dacl: bigint) => T): T | null {
  const descriptor = new BigUint64Array(1);
  if (advapi().ConvertStringSecurityDescriptorToSecurityDescriptorW(ptr(wide(sddl)), SDDL_REVISION_1, ptr(descriptor), null) === 0) return null;
  try {
    const present = new Int32Array(1);
    const dacl = new BigUint64Array(1);
    const defaulted = new Int32Array(1);
    if (advapi().GetSecurityDescriptorDacl(descriptor[0]!, ptr(present), ptr(dacl), ptr(defaulted)) === 0 || present[0] === 0) return null;
    return use(dacl[0]!);
  } finally {
    kernel32().LocalFree(descriptor[0]!);
  }
}

/** The parts `info` names of a system-allocated `descriptor` as SDDL, or null; the descriptor is freed either way. */
export function descriptorSddl(descriptor: bigint, info: number): string | null {
  const k = kernel32();
  try {
    const text = new BigUint64Array(1);
    if (advapi().ConvertSecurityDescriptorToStringSecurityDescriptorW(descriptor, SDDL_REVISION_1, info, ptr(text), null) === 0) return null;
    try {
      let out = "";
      for (let offset = 0; offset < MAX_SDDL_UNITS * 2; offset += 2) {
        const unit = read.u16(Number(text[0]!) as never, offset);
        if (unit === 0) break;
        out += String.fromCharCode(unit);
      }
      return out;
    } finally {
      k.LocalFree(text[0]!);
    }
  } finally {
    k.LocalFree(descriptor);
  }
}
