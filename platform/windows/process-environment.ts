// Reads another process's environment block, the Windows counterpart of /proc/<pid>/environ, to
// find the SERVERFS_RUN_ID marker a task's processes inherit. The block lives in the target's
// memory: PROCESS_BASIC_INFORMATION gives the PEB, the PEB's ProcessParameters points at
// RTL_USER_PROCESS_PARAMETERS, whose Environment and EnvironmentSize locate the UTF-16 block.
// Like environ on Linux, this is the block as the process holds it now: a process that rewrites
// its own environment can remove the marker (docs/security.md).
import { ptr } from "bun:ffi";
import { findMarkerInBlock } from "../posix/process-table.ts";
import { kernel32, ntdll } from "./kernel32.ts";

const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const PROCESS_VM_READ = 0x0010;
const ProcessBasicInformation = 0;
/** PROCESS_BASIC_INFORMATION on x64: ExitStatus (+pad) 0, PebBaseAddress 8, ... 48 bytes. */
const BASIC_INFORMATION_SIZE = 48;
/** PEB on x64: ProcessParameters at 0x20. */
const PEB_PROCESS_PARAMETERS = 0x20n;
/** RTL_USER_PROCESS_PARAMETERS on x64: Environment at 0x80, EnvironmentSize (SIZE_T) at 0x3f0. */
const PARAMETERS_ENVIRONMENT = 0x80n;
const PARAMETERS_ENVIRONMENT_SIZE = 0x3f0n;
/** An environment larger than this is read only this far (a marker past it is not found). */
const ENVIRONMENT_CAP_BYTES = 4 * 1024 * 1024;
const PAGE = 4096;

function readPointer(process: bigint, address: bigint): bigint | null {
  const out = new BigUint64Array(1);
  return kernel32().ReadProcessMemory(process, address, ptr(out), 8n, null) === 0 ? null : out[0]!;
}

/**
 * The process's environment block decoded to a string (`NAME=value\0...`), or null when it
 * cannot be read (gone, another user's, protected).
 */
export function processEnvironment(pid: number): string | null {
  const k = kernel32();
  const process = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_VM_READ, 0, pid);
  if (process === 0n) return null;
  try {
    const basic = new BigUint64Array(BASIC_INFORMATION_SIZE / 8);
    if (ntdll().NtQueryInformationProcess(process, ProcessBasicInformation, ptr(basic), BASIC_INFORMATION_SIZE, null) !== 0) return null;
    const peb = basic[1]!;
    if (peb === 0n) return null;
    const parameters = readPointer(process, peb + PEB_PROCESS_PARAMETERS);
    if (parameters === null || parameters === 0n) return null;
    const block = readPointer(process, parameters + PARAMETERS_ENVIRONMENT);
    const declared = readPointer(process, parameters + PARAMETERS_ENVIRONMENT_SIZE);
    if (block === null || block === 0n) return null;
    const limit = declared !== null && declared > 0n && declared <= BigInt(ENVIRONMENT_CAP_BYTES) ? Number(declared) : ENVIRONMENT_CAP_BYTES;
    return readBlock(process, block, limit);
  } finally {
    k.CloseHandle(process);
  }
}

/** Reads page by page (a read may not cross into unmapped memory) up to the double NUL. */
function readBlock(process: bigint, address: bigint, limit: number): string | null {
  const bytes = new Uint8Array(limit);
  let have = 0;
  while (have < limit) {
    const at = address + BigInt(have);
    const toPageEnd = PAGE - Number(at % BigInt(PAGE));
    const want = Math.min(toPageEnd, limit - have);
    if (kernel32().ReadProcessMemory(process, at, ptr(bytes.subarray(have)), BigInt(want), null) === 0) break;
    const from = have;
    have += want;
    if (endsBlock(bytes, from, have)) break;
  }
  if (have === 0) return null;
  const units = new Uint16Array(bytes.buffer, 0, Math.floor(have / 2));
  let text = "";
  for (let i = 0; i < units.length; i += 4096) text += String.fromCharCode(...units.subarray(i, i + 4096));
  const end = text.indexOf("\0\0");
  return end === -1 ? text : text.slice(0, end + 1);
}

/** Two UTF-16 NULs in a row in the part just read (or straddling its start). */
function endsBlock(bytes: Uint8Array, from: number, have: number): boolean {
  for (let i = Math.max(0, from - 2) & ~1; i + 3 < have; i += 2) {
    if (bytes[i] === 0 && bytes[i + 1] === 0 && bytes[i + 2] === 0 && bytes[i + 3] === 0) return true;
  }
  return false;
}

/** Which of `markers` the process carries as SERVERFS_RUN_ID=<marker>, or null. */
export function processMarker(pid: number, markers: readonly string[]): string | null {
  if (markers.length === 0) return null;
  const environment = processEnvironment(pid);
  return environment === null ? null : findMarkerInBlock(Buffer.from(environment, "utf8"), markers);
}
