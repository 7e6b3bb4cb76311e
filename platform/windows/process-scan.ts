// The part of a stop proof a Job Object cannot give: processes that LEFT the job. ActiveProcesses
// counts members only, so a child that broke away (CREATE_BREAKAWAY_FROM_JOB) would leave the
// count at 0 while it runs on. A Toolhelp snapshot lists every process with its parent pid; a live
// process outside the job whose parent is a member of the task's tree is an escapee, and so is
// every live descendant of an escapee.
//
// Pids are reused, so a parent pid alone proves nothing: a process counts as a child of a tree
// member only if it was created no earlier than that member (GetProcessTimes), and no later than
// an unrelated process that took over the member's pid after the member died. Creation times come
// from the system clock tick, so a child started in its parent's tick has an equal time: "not
// before" is the test, not "strictly after".
import { ptr } from "bun:ffi";
import { INVALID_HANDLE_VALUE, kernel32 } from "./kernel32.ts";
import { processMarker } from "./process-environment.ts";

const TH32CS_SNAPPROCESS = 0x2;
const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const PROCESS_TERMINATE = 0x0001;
/**
 * PROCESSENTRY32W on x64 (tlhelp32.h): dwSize 0, cntUsage 4, th32ProcessID 8, 4 bytes padding,
 * th32DefaultHeapID (ULONG_PTR) 16, th32ModuleID 24, cntThreads 28, th32ParentProcessID 32,
 * pcPriClassBase 36, dwFlags 40, szExeFile[260] WCHAR 44..564, padded to 568 (8-byte alignment).
 */
export const PROCESSENTRY32W_SIZE = 568;
const ENTRY_PID = 8;
const ENTRY_PARENT_PID = 32;
const ENTRY_EXE = 44;
const EXE_CHARS = 260;

export interface ProcessEntry {
  pid: number;
  ppid: number;
  exe: string;
}

/** A member of the task's tree as the stop saw it: its pid and creation time (FILETIME ticks). */
export interface TreeMember {
  pid: number;
  created: bigint;
}

/** One live process with its creation time, as the scan needs it. */
export interface LiveProcess extends ProcessEntry {
  created: bigint;
}

/** Every process in the system right now, or null when the snapshot cannot be taken. */
export function processSnapshot(): ProcessEntry[] | null {
  const k = kernel32();
  const snapshot = k.CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snapshot === INVALID_HANDLE_VALUE || snapshot === 0n) return null;
  try {
    const entry = new Uint8Array(PROCESSENTRY32W_SIZE);
    const view = new DataView(entry.buffer);
    view.setUint32(0, PROCESSENTRY32W_SIZE, true);
    const rows: ProcessEntry[] = [];
    for (let ok = k.Process32FirstW(snapshot, ptr(entry)); ok !== 0; ok = k.Process32NextW(snapshot, ptr(entry))) {
      rows.push({ pid: view.getUint32(ENTRY_PID, true), ppid: view.getUint32(ENTRY_PARENT_PID, true), exe: exeName(view) });
    }
    return rows;
  } finally {
    k.CloseHandle(snapshot);
  }
}

function exeName(view: DataView): string {
  let exe = "";
  for (let i = 0; i < EXE_CHARS; i++) {
    const unit = view.getUint16(ENTRY_EXE + i * 2, true);
    if (unit === 0) break;
    exe += String.fromCharCode(unit);
  }
  return exe;
}

/**
 * The creation time of a process that is still running, or null when it has exited or cannot be
 * opened (gone, or not ours to query).
 */
export function liveCreationTime(pid: number): bigint | null {
  const k = kernel32();
  const handle = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
  if (handle === 0n) return null;
  try {
    const times = new BigUint64Array(4); // creation, exit, kernel, user
    if (k.GetProcessTimes(handle, ptr(times), ptr(times.subarray(1)), ptr(times.subarray(2)), ptr(times.subarray(3))) === 0) return null;
    // A running process has no exit time; one that exited while someone holds a handle has one.
    return times[1] === 0n ? times[0]! : null;
  } finally {
    k.CloseHandle(handle);
  }
}

/**
 * The live processes outside the job that belong to the task anyway: pure, for the rule above.
 * `live` is every live process with its creation time; `inJob` says which pids the job holds;
 * `marked` says which carry the task's run marker (each of those counts, and so do its
 * descendants, whatever became of the parent that started it).
 */
export function escapees(
  tree: readonly TreeMember[],
  live: readonly LiveProcess[],
  inJob: (pid: number) => boolean,
  marked: (p: LiveProcess) => boolean = () => false,
): LiveProcess[] {
  const livePid = new Map(live.map((p) => [p.pid, p]));
  // For each parent pid: from when its children count as the tree's, and until when (exclusive).
  // A pid can stand for more than one member over the tree's life, hence a list of spans.
  const spans = new Map<number, Array<{ from: bigint; until: bigint | null }>>();
  const add = (pid: number, created: bigint): void => {
    const holder = livePid.get(pid);
    // The pid now belongs to a younger process: the member died and its pid was handed out again.
    const until = holder !== undefined && holder.created > created ? holder.created : null;
    spans.set(pid, [...(spans.get(pid) ?? []), { from: created, until }]);
  };
  for (const member of tree) add(member.pid, member.created);
  const isChild = (p: LiveProcess): boolean =>
    (spans.get(p.ppid) ?? []).some((span) => p.created >= span.from && (span.until === null || p.created < span.until));
  // Keyed by pid and creation time: a live process at a member's pid may be another process.
  const key = (pid: number, created: bigint): string => `${pid}@${created}`;
  const taken = new Set<string>(tree.map((m) => key(m.pid, m.created)));
  const found: LiveProcess[] = [];
  for (const p of live) {
    if (taken.has(key(p.pid, p.created)) || inJob(p.pid) || !marked(p)) continue;
    taken.add(key(p.pid, p.created));
    found.push(p);
  }
  for (const p of found) add(p.pid, p.created);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of live) {
      if (taken.has(key(p.pid, p.created)) || inJob(p.pid) || p.pid === p.ppid || !isChild(p)) continue;
      taken.add(key(p.pid, p.created));
      found.push(p);
      add(p.pid, p.created);
      grew = true;
    }
  }
  return found;
}

/**
 * Scans the system for the task's processes outside its job (see above): descendants of `tree`,
 * and processes carrying one of `markers` with their descendants. Null when the process table
 * cannot be read, which a stop must report as not proved.
 */
export function findEscapees(tree: readonly TreeMember[], inJob: (pid: number) => boolean, markers: readonly string[]): LiveProcess[] | null {
  const rows = processSnapshot();
  if (rows === null) return null;
  const live: LiveProcess[] = [];
  for (const row of rows) {
    if (row.pid === process.pid) continue; // the looker itself is never part of what it looks for
    const created = liveCreationTime(row.pid);
    if (created !== null) live.push({ ...row, created });
  }
  return escapees(tree, live, inJob, (p) => processMarker(p.pid, markers) !== null);
}

/**
 * Terminates the process at `pid` if it is still the one created at `created` (checked on the
 * handle that terminates it, so a reused pid is never hit). True when it was terminated.
 */
export function terminateIfSame(pid: number, created: bigint, exitCode: number): boolean {
  const k = kernel32();
  const handle = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_TERMINATE, 0, pid);
  if (handle === 0n) return false;
  try {
    const times = new BigUint64Array(4);
    if (k.GetProcessTimes(handle, ptr(times), ptr(times.subarray(1)), ptr(times.subarray(2)), ptr(times.subarray(3))) === 0) return false;
    if (times[0] !== created || times[1] !== 0n) return false;
    return k.TerminateProcess(handle, exitCode) !== 0;
  } finally {
    k.CloseHandle(handle);
  }
}
