// The macOS process table through libproc: proc_listallpids for the pids, proc_pidinfo
// (PROC_PIDTBSDINFO) for ppid, pgid, uid, status and start time, getsid for the session, and
// sysctl(KERN_PROCARGS2) for the exec environment that carries the task marker.
import { ptr } from "bun:ffi";
import { findMarker, type ProcEntry, type ProcReader } from "../posix/process-table.ts";
import { libSystem } from "./libsystem.ts";

const PROC_PIDTBSDINFO = 3;
const PROC_BSDINFO_SIZE = 136;
const SZOMB = 5;
const CTL_KERN = 1;
const KERN_ARGMAX = 8;
const KERN_PROCARGS2 = 49;

interface BsdInfo {
  pid: number;
  ppid: number;
  pgid: number;
  uid: number;
  zombie: boolean;
  command: string;
  startTime: string;
}

/** Decode struct proc_bsdinfo (sys/proc_info.h); exported for a layout test that runs anywhere. */
export function parseBsdInfo(buffer: Uint8Array): BsdInfo {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const commBytes = buffer.subarray(48, 64);
  const nul = commBytes.indexOf(0);
  return {
    zombie: view.getUint32(4, true) === SZOMB,
    pid: view.getUint32(12, true),
    ppid: view.getUint32(16, true),
    uid: view.getUint32(20, true),
    command: new TextDecoder().decode(nul === -1 ? commBytes : commBytes.subarray(0, nul)),
    pgid: view.getUint32(100, true),
    startTime: `${view.getBigUint64(120, true)}.${view.getBigUint64(128, true)}`,
  };
}

export function bsdInfo(pid: number): BsdInfo | null {
  const buffer = new Uint8Array(PROC_BSDINFO_SIZE);
  const got = libSystem().proc_pidinfo(pid, PROC_PIDTBSDINFO, 0n, ptr(buffer), PROC_BSDINFO_SIZE);
  if (got !== PROC_BSDINFO_SIZE) return null;
  return parseBsdInfo(buffer);
}

/**
 * The environment part of a KERN_PROCARGS2 buffer: int argc, the exec path, NUL padding, argc
 * argument strings, then the environment strings up to an empty string.
 */
export function environmentFromProcArgs(buffer: Uint8Array): string {
  if (buffer.length < 4) return "";
  const argc = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength).getInt32(0, true);
  let at = 4;
  const skipString = () => {
    while (at < buffer.length && buffer[at] !== 0) at++;
  };
  const skipNuls = () => {
    while (at < buffer.length && buffer[at] === 0) at++;
  };
  skipString(); // exec path
  skipNuls();
  for (let i = 0; i < argc && at < buffer.length; i++) {
    skipString();
    at++;
  }
  const env: string[] = [];
  while (at < buffer.length && buffer[at] !== 0) {
    const start = at;
    skipString();
    env.push(new TextDecoder("latin1").decode(buffer.subarray(start, at)));
    at++;
  }
  return env.join("\0");
}

let argMax = 0;
function kernArgMax(): number {
  if (argMax > 0) return argMax;
  const mib = new Int32Array([CTL_KERN, KERN_ARGMAX]);
  const value = new Int32Array(1);
  const size = new BigUint64Array([4n]);
  argMax = libSystem().sysctl(ptr(mib), 2, ptr(value), ptr(size), null, 0n) === 0 ? value[0]! : 256 * 1024;
  return argMax;
}

export function createDarwinProcReader(): ProcReader {
  const ownUid = process.getuid?.() ?? -1;
  return {
    list(): ProcEntry[] {
      const sys = libSystem();
      const count = sys.proc_listallpids(null, 0);
      if (count <= 0) throw new Error("proc_listallpids failed");
      const pids = new Int32Array(count + 64);
      const got = sys.proc_listallpids(ptr(pids), pids.byteLength);
      const out: ProcEntry[] = [];
      for (let i = 0; i < got && i < pids.length; i++) {
        const pid = pids[i]!;
        if (pid <= 0) continue;
        const info = bsdInfo(pid);
        if (!info) continue;
        const sid = sys.getsid(pid);
        out.push({
          pid,
          ppid: info.ppid,
          pgid: info.pgid,
          sid: sid < 0 ? -1 : sid,
          zombie: info.zombie,
          startTime: info.startTime,
          command: info.command,
        });
      }
      return out;
    },
    markerOf(pid: number, markers: readonly string[]): string | null {
      const info = bsdInfo(pid);
      if (!info || info.uid !== ownUid) return null;
      const size = kernArgMax();
      const buffer = new Uint8Array(size);
      const length = new BigUint64Array([BigInt(size)]);
      const mib = new Int32Array([CTL_KERN, KERN_PROCARGS2, pid]);
      if (libSystem().sysctl(ptr(mib), 3, ptr(buffer), ptr(length), null, 0n) !== 0) return null;
      return findMarker(environmentFromProcArgs(buffer.subarray(0, Number(length[0]))), markers);
    },
  };
}
