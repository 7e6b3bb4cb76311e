// /proc as a ProcReader. /proc/<pid>/stat gives ppid, pgid, session, state and the start time in
// clock ticks since boot (field 22), which together with the pid identifies a process even if
// the pid is later reused. /proc/<pid>/environ is the environment the process was exec'd with.
//
// Every stop looks at every process on the host (twice when nothing is left), so this runs a few
// hundred times per task: files are read through one reused buffer and decoded in place. With
// readFileSync each read took a fresh 256 KiB buffer (a /proc file reports size 0) and each line
// became dozens of substrings, all left for the collector: tens of MB of native memory per few
// hundred tasks that the Bridge's RSS carried until a GC.
import { closeSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { findMarkerInBlock, type ProcEntry, type ProcReader } from "../posix/process-table.ts";

/** Kept between reads: a stat line is ~300 bytes and an environment a few KiB. */
const KEPT_BUFFER_BYTES = 16 * 1024;
let scratch = Buffer.allocUnsafe(KEPT_BUFFER_BYTES);

/**
 * One whole /proc file, as a view of a buffer that the next read reuses: decode what you need from
 * it before reading again.
 */
export function readProcFile(file: string): Buffer {
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
    startTime: b.toString("latin1", starts[19]!, ends[19]!),
    command: b.toString("utf8", open + 1, close),
  };
}

export function readProcEntry(pid: number): ProcEntry | null {
  try {
    return parseProcStat(readProcFile(`/proc/${pid}/stat`));
  } catch {
    return null;
  }
}

export function createProcReader(): ProcReader {
  const ownUid = process.getuid?.() ?? -1;
  return {
    list(): ProcEntry[] {
      const out: ProcEntry[] = [];
      for (const name of readdirSync("/proc")) {
        const first = name.charCodeAt(0);
        if (first < 48 || first > 57) continue;
        const entry = readProcEntry(Number(name));
        if (entry) out.push(entry);
      }
      return out;
    },
    markerOf(pid: number, markers: readonly string[]): string | null {
      try {
        if (statSync(`/proc/${pid}`).uid !== ownUid) return null;
        return findMarkerInBlock(readProcFile(`/proc/${pid}/environ`), markers);
      } catch {
        return null;
      }
    },
  };
}
