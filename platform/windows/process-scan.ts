// The part of a stop proof a Job Object cannot give: processes that LEFT the job. ActiveProcesses
// counts members only, so a child that broke away (CREATE_BREAKAWAY_FROM_JOB) would leave the
// count at 0 while it runs on. A Toolhelp snapshot lists every process with its parent pid; a live
// process outside the job whose parent is a member of the task's tree is an escapee, and so is
// every live descendant of an escapee.
//
// Pids are reused, so a parent pid alone proves nothing: a process counts as a child of a tree
// member only if it was created no earlier than that member (GetProcessTimes), and no later than
// the member's exit or than an unrelated process that took over the member's pid. The stop holds a
// handle to every member it notes, so those pids cannot be handed out again while it looks, and
// their exit times are known. Times come from the system clock tick, so a child started in its
// parent's tick has an equal time: "not before" is the test, not "strictly after".
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

/**
 * A member of the task's tree as the stop saw it: its pid and creation time (FILETIME ticks), and
 * its exit time once it has exited (when known: the stop holds a handle to each member it noted).
 */
export interface TreeMember {
  pid: number;
  created: bigint;
  exited?: bigint | null;
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
 * A handle to a running process, held so its pid cannot be handed out again while it is held
 * (Windows frees a pid only with the last handle to the process), with its creation time.
 */
export interface HeldProcess {
  pid: number;
  created: bigint;
  handle: bigint;
}

function times(handle: bigint): { created: bigint; exited: bigint } | null {
  const out = new BigUint64Array(4); // creation, exit, kernel, user
  if (kernel32().GetProcessTimes(handle, ptr(out), ptr(out.subarray(1)), ptr(out.subarray(2)), ptr(out.subarray(3))) === 0) return null;
  return { created: out[0]!, exited: out[1]! };
}

/** Opens a process that is running now, or null (gone, exited, not ours to query). */
export function holdProcess(pid: number): HeldProcess | null {
  const k = kernel32();
  const handle = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
  if (handle === 0n) return null;
  const t = times(handle);
  // A running process has no exit time; one that exited while someone holds a handle has one.
  if (t === null || t.exited !== 0n) {
    k.CloseHandle(handle);
    return null;
  }
  return { pid, created: t.created, handle };
}

/** The held process's exit time, or null while it runs. */
export function exitTimeOf(held: HeldProcess): bigint | null {
  const t = times(held.handle);
  return t === null || t.exited === 0n ? null : t.exited;
}

export function release(held: HeldProcess): void {
  kernel32().CloseHandle(held.handle);
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
    const t = times(handle);
    return t === null || t.exited !== 0n ? null : t.created;
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
  const add = (pid: number, created: bigint, exited: bigint | null = null): void => {
    const holder = livePid.get(pid);
    // The pid now belongs to a younger process: the member died and its pid was handed out again.
    const reused = holder !== undefined && holder.created > created ? holder.created : null;
    // Nothing is started by a process after it exited (the tick it exited in still counts).
    const until = exited !== null ? exited + 1n : null;
    spans.set(pid, [...(spans.get(pid) ?? []), { from: created, until: reused !== null && (until === null || reused < until) ? reused : until }]);
  };
  for (const member of tree) add(member.pid, member.created, member.exited ?? null);
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
    const t = times(handle);
    if (t === null || t.created !== created || t.exited !== 0n) return false;
    return k.TerminateProcess(handle, exitCode) !== 0;
  } finally {
    k.CloseHandle(handle);
  }
}
