// /proc as a ProcReader. /proc/<pid>/stat gives ppid, pgid, session, state and the start time in
// clock ticks since boot (field 22), which together with the pid identifies a process even if
// the pid is later reused. /proc/<pid>/environ is the environment the process was exec'd with.
//
// Every stop looks at every process on the host (twice when nothing is left), so this runs a few
// hundred times per task: files are read through one reused buffer and decoded in place. With
// readFileSync each read took a fresh 256 KiB buffer (a /proc file reports size 0) and each line
// became dozens of substrings, all left for the collector: tens of MB of native memory per few
// hundred tasks that the Bridge's RSS carried until a GC.
import { closeSync, existsSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { findMarkerInBlock, MARKER_UNSETTLED, type MarkerVerdict, type ProcEntry, type ProcReader } from "../posix/process-table.ts";

/** Kept between reads: a stat line is ~300 bytes and an environment a few KiB. */
const KEPT_BUFFER_BYTES = 16 * 1024;
let scratch = Buffer.allocUnsafe(KEPT_BUFFER_BYTES);

/**
 * One whole /proc file, as a view of a buffer that the next read reuses: decode what you need from
 * it before reading again.
 */
export function readProcFile(file: string, oneRecord = false): Buffer {
  const fd = openSync(file, "r");
  try {
    let buf = scratch;
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
      // A one-record file (stat: the kernel formats it whole, then hands out what fits) that came
      // in short is all there is; the read that would return 0 is one syscall per process per look.
      if (oneRecord && length < buf.length) break;
    }
    // A rare huge environment is not kept for the life of the process.
    if (buf.length <= KEPT_BUFFER_BYTES) scratch = buf;
    return buf.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

const SPACE = 0x20;

/** A non-negative decimal field, or NaN. */
function decimal(b: Uint8Array, start: number, end: number): number {
  if (end <= start) return Number.NaN;
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = b[i]! - 48;
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
}

/** Parse one /proc/<pid>/stat line. The command is in parentheses and may itself hold ')' or spaces. */
export function parseProcStat(line: Uint8Array): ProcEntry | null {
  const b = Buffer.from(line.buffer, line.byteOffset, line.byteLength);
  const open = b.indexOf(0x28);
  const close = b.lastIndexOf(0x29);
  if (open < 0 || close < open) return null;
  let pidStart = 0;
  let pidEnd = open;
  while (pidStart < pidEnd && b[pidStart] === SPACE) pidStart++;
  while (pidEnd > pidStart && b[pidEnd - 1] === SPACE) pidEnd--;
  const pid = decimal(b, pidStart, pidEnd);
  // Fields after the command, starting with field 3 (state); we need up to field 22 (start time).
  const starts: number[] = [];
  const ends: number[] = [];
  let at = close + 2;
  while (starts.length < 20 && at <= b.length) {
    let next = b.indexOf(SPACE, at);
    if (next === -1) next = b.length;
    starts.push(at);
    ends.push(next);
    at = next + 1;
  }
  if (!Number.isInteger(pid) || starts.length < 20 || ends[0]! <= starts[0]!) return null;
  const state = b[starts[0]!];
  return {
    pid,
    ppid: decimal(b, starts[1]!, ends[1]!),
    pgid: decimal(b, starts[2]!, ends[2]!),
    sid: decimal(b, starts[3]!, ends[3]!),
    zombie: state === 0x5a || state === 0x58, // 'Z' or 'X'
    // 'T' is a job-control stop. 't' (a ptrace stop) is not: a tracer outside the task can resume it.
    stopped: state === 0x54,
    threads: decimal(b, starts[17]!, ends[17]!),
    blocked: state === 0x44,
    startTime: b.toString("latin1", starts[19]!, ends[19]!),
    command: b.toString("utf8", open + 1, close),
  };
}

/**
 * Whether start time `a` (stat field 22) is strictly before `b`. Both count clock ticks of
 * CLOCK_BOOTTIME since boot, which never goes back and which the kernel reads for a child during
 * its parent's fork: a descendant's value is never below its ancestor's. One tick is 1/USER_HZ
 * (10 ms), so two processes born in the same tick read equal and neither is before the other.
 * Compared as numbers: "99" is before "100".
 */
const TICKS = /^[0-9]{1,15}$/;
export function startTicksBefore(a: string, b: string): boolean {
  return TICKS.test(a) && TICKS.test(b) && Number(a) < Number(b);
}

export function readProcEntry(pid: number): ProcEntry | null {
  try {
    return parseProcStat(readProcFile(`/proc/${pid}/stat`, true));
  } catch {
    return null;
  }
}

/**
 * Where a process's environment lies in its memory map: env_start and env_end, stat fields 50 and
 * 51. "settled" when there is nothing to wait for: the process is gone or a zombie, it is a kernel
 * thread (no memory map, and no parent but kthreadd: never ours), or the kernel is too old to say.
 */
export type EnvironmentBounds = { start: number; end: number } | "settled";

export function environmentBounds(pid: number): EnvironmentBounds {
  let b: Buffer;
  try {
    b = readProcFile(`/proc/${pid}/stat`);
  } catch {
    return "settled";
  }
  const close = b.lastIndexOf(0x29);
  if (close < 0) return "settled";
  const fields: Array<[number, number]> = [];
  let at = close + 2;
  while (fields.length < 49 && at <= b.length) {
    let next = b.indexOf(SPACE, at);
    if (next === -1) next = b.length;
    fields.push([at, next]);
    at = next + 1;
  }
  if (fields.length < 49) return "settled";
  const ppid = decimal(b, fields[1]![0], fields[1]![1]);
  const state = b[fields[0]![0]];
  if (pid === 2 || ppid === 2 || state === 0x5a || state === 0x58) return "settled";
  return { start: decimal(b, fields[47]![0], fields[47]![1]), end: decimal(b, fields[48]![0], fields[48]![1]) };
}

/**
 * Whether an environ that read empty between the bounds read `before` and the one `after` is a
 * real empty environment (`env -i`), so "no marker" may be remembered. execve installs a fresh
 * memory map whose bounds stay 0 until it has copied the new environment onto the stack, so an
 * environ read in that window is empty even for a process that carries the marker, and a bounds
 * read a moment later may already show the new map laid out. Only the same empty range of a
 * laid-out map on both sides of the read is a real empty environment; anything else is a process
 * between two programs, to be read again on the next look.
 */
export function emptyEnvironmentIsReal(before: EnvironmentBounds, after: EnvironmentBounds): boolean {
  if (before === "settled" || after === "settled") return true;
  return before.start !== 0 && before.start === before.end && after.start === before.start && after.end === before.end;
}

/**
 * The kernel function a vfork parent sleeps in, as its wchan shows it: wait_for_vfork_done, or the
 * clone entry it is inlined into (kernel_clone since Linux 5.10, _do_fork before). Any other sleep
 * inside a clone shows the function it sleeps in (an allocator, a lock), never the entry itself.
 */
const VFORK_WAITS = new Set(["wait_for_vfork_done", "kernel_clone", "_do_fork"]);

function waitsForVforkChild(taskDir: string): boolean {
  try {
    return VFORK_WAITS.has(readProcFile(`${taskDir}/wchan`).toString("latin1").trim());
  } catch {
    return false;
  }
}

/** pid_max: where pid allocation wraps around (to 300 on Linux; any wrap is handled as below). */
let pidMax = 0;
function readPidMax(): number {
  if (pidMax === 0) {
    try {
      const b = readProcFile("/proc/sys/kernel/pid_max");
      pidMax = decimal(b, 0, b.indexOf(0x0a) === -1 ? b.length : b.indexOf(0x0a)) || 4_194_304;
    } catch {
      pidMax = 4_194_304;
    }
  }
  return pidMax;
}

/** The pid most recently handed out in this pid namespace (the last field of /proc/loadavg). */
export function lastPidHandedOut(): number {
  const b = readProcFile("/proc/loadavg");
  let end = b.length;
  while (end > 0 && (b[end - 1] === 0x0a || b[end - 1] === SPACE)) end--;
  const start = b.lastIndexOf(SPACE, end - 1) + 1;
  return decimal(b, start, end);
}

/**
 * The pids handed out after `before` up to and including `after`, oldest first, or null when too
 * many were (the caller lists again). Pids are handed out in increasing order and wrap at pid_max.
 */
export function pidsBetween(before: number, after: number, max = readPidMax(), limit = 4096): number[] | null {
  if (!Number.isInteger(before) || !Number.isInteger(after)) return null;
  if (after === before) return [];
  const count = after > before ? after - before : max - before - 1 + after;
  if (count > limit) return null;
  const out: number[] = [];
  for (let pid = before + 1; out.length < count; pid++) {
    if (pid >= max) pid = 1;
    out.push(pid);
  }
  return out;
}

/** A thread id opens as /proc/<tid> too; only a thread-group leader is a process. */
function isProcess(pid: number): boolean {
  try {
    const b = readProcFile(`/proc/${pid}/status`);
    const at = b.indexOf("\nTgid:\t");
    if (at === -1) return false;
    const start = at + 7;
    const end = b.indexOf(0x0a, start);
    return decimal(b, start, end === -1 ? b.length : end) === pid;
  } catch {
    return false;
  }
}

function listOnce(out: ProcEntry[], seen: Set<number>): void {
  for (const name of readdirSync("/proc")) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    const entry = readProcEntry(pid);
    if (entry) {
      out.push(entry);
      seen.add(pid);
    }
  }
}

/**
 * The children of every thread of this process, from /proc/<pid>/task/<tid>/children (Linux 3.5,
 * CONFIG_PROC_CHILDREN), or null where the kernel has no such file. An orphan is re-parented to a
 * live thread of its subreaper, so every thread's list is read.
 */
export function ownChildren(ownPid = process.pid): ProcEntry[] | null {
  const out: ProcEntry[] = [];
  const threads = readdirSync(`/proc/${ownPid}/task`);
  for (const tid of threads) {
    let list: Buffer;
    try {
      list = readProcFile(`/proc/${ownPid}/task/${tid}/children`);
    } catch (err) {
      // A thread that ended meanwhile has no list any more; a kernel without the file has none at all.
      if ((err as { code?: unknown }).code === "ENOENT" && existsSync(`/proc/${ownPid}/task/${tid}`)) return null;
      continue;
    }
    const pids: number[] = [];
    let start = 0;
    for (let i = 0; i <= list.length; i++) {
      if (i === list.length || list[i] === SPACE || list[i] === 0x0a) {
        const pid = decimal(list, start, i);
        if (Number.isInteger(pid)) pids.push(pid);
        start = i + 1;
      }
    }
    for (const pid of pids) {
      const entry = readProcEntry(pid);
      if (entry) out.push(entry);
    }
  }
  return out;
}

export function createProcReader(): ProcReader {
  const ownUid = process.getuid?.() ?? -1;
  return {
    list(): ProcEntry[] {
      // A parent read after it forked and exited hides a child born after the directory was
      // listed. Every such child got a pid handed out during the listing, so those pids are read
      // once more afterwards. Three tries to bracket a listing; a host handing out thousands of
      // pids per listing gets the plain listing.
      for (let attempt = 0; ; attempt++) {
        const out: ProcEntry[] = [];
        const seen = new Set<number>();
        const before = lastPidHandedOut();
        listOnce(out, seen);
        const born = pidsBetween(before, lastPidHandedOut());
        if (born === null && attempt < 2) continue;
        for (const pid of born ?? []) {
          if (seen.has(pid)) continue;
          const entry = readProcEntry(pid);
          if (entry && isProcess(pid)) out.push(entry);
        }
        return out;
      }
    },
    entry(pid: number): ProcEntry | null {
      return readProcEntry(pid);
    },
    ownChildren(): ProcEntry[] | null {
      return ownChildren();
    },
    startedBefore: startTicksBefore,
    allThreadsStopped(pid: number): boolean {
      try {
        for (const tid of readdirSync(`/proc/${pid}/task`)) {
          const thread = readProcEntry(Number(tid));
          if (thread === null || thread.stopped || thread.zombie) continue;
          if (!(thread.blocked && waitsForVforkChild(`/proc/${pid}/task/${tid}`))) return false;
        }
        return true;
      } catch {
        return false;
      }
    },
    waitsForVforkChild(pid: number): boolean {
      return waitsForVforkChild(`/proc/${pid}`);
    },
    markerOf(pid: number, markers: readonly string[]): MarkerVerdict {
      try {
        if (statSync(`/proc/${pid}`).uid !== ownUid) return null;
        const environ = readProcFile(`/proc/${pid}/environ`);
        if (environ.length > 0) return findMarkerInBlock(environ, markers);
        // Empty: read it again between two reads of its bounds (see emptyEnvironmentIsReal). Only
        // this rare case pays for them.
        const before = environmentBounds(pid);
        const again = readProcFile(`/proc/${pid}/environ`);
        if (again.length > 0) return findMarkerInBlock(again, markers);
        return emptyEnvironmentIsReal(before, environmentBounds(pid)) ? null : MARKER_UNSETTLED;
      } catch {
        return null;
      }
    },
  };
}
