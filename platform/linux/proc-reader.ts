// /proc as a ProcReader. /proc/<pid>/stat gives ppid, pgid, session, state and the start time in
// clock ticks since boot (field 22), which together with the pid identifies a process even if
// the pid is later reused. /proc/<pid>/environ is the environment the process was exec'd with.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { findMarker, type ProcEntry, type ProcReader } from "../posix/process-table.ts";

/** Parse one /proc/<pid>/stat line. The command is in parentheses and may itself hold ')' or spaces. */
export function parseProcStat(text: string): ProcEntry | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const command = text.slice(open + 1, close);
  // Fields after the command, starting with field 3 (state).
  const rest = text.slice(close + 2).split(" ");
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgid = Number(rest[2]);
  const sid = Number(rest[3]);
  const startTime = rest[19]; // field 22
  if (!Number.isInteger(pid) || state === undefined || startTime === undefined) return null;
  return { pid, ppid, pgid, sid, zombie: state === "Z" || state === "X", startTime, command };
}

export function readProcEntry(pid: number): ProcEntry | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
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
        return findMarker(readFileSync(`/proc/${pid}/environ`, "latin1"), markers);
      } catch {
        return null;
      }
    },
  };
}
