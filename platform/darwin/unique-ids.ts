// A process's lineage ids through proc_pidinfo(PROC_PIDUNIQIDENTIFIERINFO). xnu answers this
// flavor for processes of every uid (bsd/kern/proc_info.c: it is in the list that sets
// NO_CHECK_SAME_USER), so a setuid descendant's ids are as readable as our own children's.
import { ptr } from "bun:ffi";
import type { ProcIds } from "./lineage.ts";
import { libSystem } from "./libsystem.ts";

// bsd/sys/proc_info_private.h: the flavor, and struct proc_uniqidentifierinfo (56 bytes, asserted
// there by _Static_assert): p_uuid[16], p_uniqueid, p_puniqueid, p_idversion (int32),
// p_orig_ppidversion (int32; `uint32_t p_reserve2` before xnu-11417, which the kernel zeroes),
// two reserved uint64.
export const PROC_PIDUNIQIDENTIFIERINFO = 17;
export const UNIQ_IDENTIFIER_INFO_SIZE = 56;
export const UNIQ = { unique: 16, parentUnique: 24, version: 32, parentVersion: 36 } as const;

/** Decode struct proc_uniqidentifierinfo. Pure; exported for the layout test. */
export function parseUniqueIds(buffer: Uint8Array): ProcIds {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  return {
    unique: view.getBigUint64(UNIQ.unique, true),
    parentUnique: view.getBigUint64(UNIQ.parentUnique, true),
    version: view.getInt32(UNIQ.version, true),
    parentVersion: view.getInt32(UNIQ.parentVersion, true),
  };
}

/** `pid`'s ids, or null when it is gone (or the kernel refused). */
export function uniqueIdsOf(pid: number, scratch = new Uint8Array(UNIQ_IDENTIFIER_INFO_SIZE)): ProcIds | null {
  const got = libSystem().proc_pidinfo(pid, PROC_PIDUNIQIDENTIFIERINFO, 0n, ptr(scratch), UNIQ_IDENTIFIER_INFO_SIZE);
  return got === UNIQ_IDENTIFIER_INFO_SIZE ? parseUniqueIds(scratch) : null;
}
