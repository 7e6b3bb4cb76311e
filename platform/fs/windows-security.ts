// What a replaced file keeps on Windows (docs/security.md, "Windows names and handles"): its DACL (protected
// or inheriting, as it was), its owner, and its hidden/system/archive/not-indexed attributes. What
// cannot be carried onto the new file atomically fails the replacement closed (the caller answers
// METADATA_PRESERVATION_FAILED and nothing changes): a different owner (setting one needs
// SeRestorePrivilege), named alternate data streams, extended attributes, compression, encryption.
// READ_ONLY is not copied: a read-only file cannot be replaced at all (ACCESS_DENIED), and a
// read-only temp could not be removed again.

import { dlopen, FFIType, toArrayBuffer, type Pointer } from "bun:ffi";
import * as nt from "./windows.ts";

const { u64, u32, i32, ptr: P } = FFIType;

function load() {
  return dlopen("advapi32.dll", {
    GetSecurityInfo: { args: [u64, u32, u32, P, P, P, P, P], returns: u32 },
    SetSecurityInfo: { args: [u64, u32, u32, u64, u64, u64, u64], returns: u32 },
    GetSecurityDescriptorControl: { args: [u64, P, P], returns: i32 },
    EqualSid: { args: [u64, u64], returns: i32 },
  }).symbols;
}
let adv: ReturnType<typeof load> | null = null;
function advapi32(): ReturnType<typeof load> {
  if (adv === null) adv = load();
  return adv;
}
function loadFree() {
  return dlopen("kernel32.dll", { LocalFree: { args: [u64], returns: u64 } }).symbols;
}
let k32: ReturnType<typeof loadFree> | null = null;

const SE_FILE_OBJECT = 1;
const OWNER = 0x1;
const DACL = 0x4;
const PROTECTED_DACL = 0x80000000;
const UNPROTECTED_DACL = 0x20000000;
const SE_DACL_PROTECTED = 0x1000;

const COPIED_ATTRIBUTES = 0x2 | 0x4 | 0x20 | 0x2000; // hidden, system, archive, not content indexed
const UNCOPYABLE_ATTRIBUTES = 0x800 | 0x4000; // compressed, encrypted

interface Security {
  owner: bigint;
  dacl: bigint;
  sd: bigint;
}

function securityOf(h: bigint): Security {
  const owner = new BigUint64Array(1);
  const dacl = new BigUint64Array(1);
  const sd = new BigUint64Array(1);
  const rc = advapi32().GetSecurityInfo(h, SE_FILE_OBJECT, OWNER | DACL, owner, null, dacl, null, sd);
  if (rc !== 0) throw new nt.NtError("EACCES", rc, "GetSecurityInfo");
  return { owner: owner[0] as bigint, dacl: dacl[0] as bigint, sd: sd[0] as bigint };
}

function free(s: Security | null): void {
  if (s === null || s.sd === 0n) return;
  if (k32 === null) k32 = loadFree();
  k32.LocalFree(s.sd);
}

/** Whether an ACL holds any ACE that was set on the object itself rather than inherited. */
function hasExplicitAce(acl: bigint): boolean {
  const head = new DataView(toArrayBuffer(Number(acl) as Pointer, 0, 8));
  const size = head.getUint16(2, true);
  const count = head.getUint16(4, true);
  const body = new DataView(toArrayBuffer(Number(acl) as Pointer, 0, size));
  let off = 8;
  for (let i = 0; i < count && off + 4 <= size; i++) {
    if ((body.getUint8(off + 1) & 0x10) === 0) return true; // INHERITED_ACE clear
    off += body.getUint16(off + 2, true);
  }
  return false;
}

export function copySecurity(src: bigint, dst: bigint): void {
  if (nt.namedStreamCount(src) > 0) throw new nt.NtError("ENOTSUP", 0xc00000bb, "streams");
  if (nt.eaSize(src) > 0) throw new nt.NtError("ENOTSUP", 0xc00000bb, "extended attributes");
  const attributes = nt.fileAttributes(src);
  if ((attributes & UNCOPYABLE_ATTRIBUTES) !== 0) throw new nt.NtError("ENOTSUP", 0xc00000bb, "attributes");
  nt.setFileAttributes(dst, attributes & COPIED_ATTRIBUTES);
  // Wine synthesises DACLs from Unix modes and maps a DACL set back lossily (a 0600 file's DACL
  // set on a new file gives 0775, measured with Wine 8.0): there the copy is skipped, and a
  // replaced file gets Wine's default mode (docs/platform.md lists this gap).
  if (nt.underWine()) return;
  let from: Security | null = null;
  let to: Security | null = null;
  try {
    from = securityOf(src);
    to = securityOf(dst);
    if (from.owner !== 0n && to.owner !== 0n && advapi32().EqualSid(from.owner, to.owner) === 0) {
      throw new nt.NtError("EPERM", 0, "owner");
    }
    const control = new Uint16Array(1);
    const revision = new Uint32Array(1);
    if (advapi32().GetSecurityDescriptorControl(from.sd, control, revision) === 0) throw new nt.NtError("EACCES", 0, "GetSecurityDescriptorControl");
    const isProtected = ((control[0] as number) & SE_DACL_PROTECTED) !== 0;
    // only inherited ACEs: the temp, created in the same directory, already inherited the same ones
    if (!isProtected && from.dacl !== 0n && !hasExplicitAce(from.dacl)) return;
    // a null DACL (everyone, everything) is copied as such: dacl 0 means exactly that here
    const rc = advapi32().SetSecurityInfo(dst, SE_FILE_OBJECT, DACL | (isProtected ? PROTECTED_DACL : UNPROTECTED_DACL), 0n, 0n, from.dacl, 0n);
    if (rc !== 0) throw new nt.NtError("EACCES", rc, "SetSecurityInfo");
  } finally {
    free(from);
    free(to);
  }
}

