// The macOS process table: sysctl KERN_PROC_ALL for every process of every uid (kinfo-proc.ts),
// getsid for the session, and each process's lineage ids (unique-ids.ts) for TaskLineage, fed by
// the fork watcher (fork-watch.ts). The task marker has two signals, read for our own uid only:
// the inherited marker-file descriptor (PROC_PIDLISTFDS, then proc_pidfdinfo
// PROC_PIDFDVNODEPATHINFO; see marker-file.ts) and the exec environment (sysctl KERN_PROCARGS2),
// which is hidden for SIP-restricted binaries.
import { ptr } from "bun:ffi";
import { findMarker, MARKER_UNREADABLE, type ProcEntry, type ProcReader, type TaskLineageView } from "../posix/process-table.ts";
import { forkWatch } from "./fork-watch.ts";
import { CTL_KERN, listKinfoProcs, SSTOP, SZOMB, type KinfoEntry } from "./kinfo-proc.ts";
import { TaskLineage, type ProcIds } from "./lineage.ts";
import { libSystem } from "./libsystem.ts";
import { uniqueIdsOf } from "./unique-ids.ts";
import { leaderIdsOf, markerDirectory, markerFromPaths, markerVerdict, type MarkerSignal } from "./marker-file.ts";

const PROC_PIDTBSDINFO = 3;
const PROC_BSDINFO_SIZE = 136;
const KERN_ARGMAX = 8;
const KERN_PROCARGS2 = 49;
// sys/proc_info.h: struct proc_fdinfo { int32 proc_fd; uint32 proc_fdtype } (8 bytes), and
// struct vnode_fdinfowithpath = proc_fileinfo (24) + vnode_info (152) + vip_path[MAXPATHLEN].
const PROC_PIDLISTFDS = 1;
const PROC_FDINFO_SIZE = 8;
const PROX_FDTYPE_VNODE = 1;
const PROC_PIDFDVNODEPATHINFO = 2;
const VNODE_FDINFOWITHPATH_SIZE = 1200;
const VIP_PATH_OFFSET = 176;
const MAXPATHLEN = 1024;

type BsdInfo = KinfoEntry;

/** Decode struct proc_bsdinfo (sys/proc_info.h); exported for a layout test that runs anywhere. */
export function parseBsdInfo(buffer: Uint8Array): BsdInfo {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const commBytes = buffer.subarray(48, 64);
  const nul = commBytes.indexOf(0);
  return {
    zombie: view.getUint32(4, true) === SZOMB,
    stopped: view.getUint32(4, true) === SSTOP,
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

/** Decode a PROC_PIDLISTFDS buffer into the vnode descriptors; exported for a layout test. */
export function vnodeFds(buffer: Uint8Array, bytes: number): number[] {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const out: number[] = [];
  for (let at = 0; at + PROC_FDINFO_SIZE <= Math.min(bytes, buffer.length); at += PROC_FDINFO_SIZE) {
    if (view.getUint32(at + 4, true) === PROX_FDTYPE_VNODE) out.push(view.getInt32(at, true));
  }
  return out;
}

/** The path in a struct vnode_fdinfowithpath; exported for a layout test. */
export function vnodePath(buffer: Uint8Array): string {
  const field = buffer.subarray(VIP_PATH_OFFSET, VIP_PATH_OFFSET + MAXPATHLEN);
  const nul = field.indexOf(0);
  return new TextDecoder().decode(nul === -1 ? field : field.subarray(0, nul));
}

/** The descriptor every task's leader inherits the marker file on (marker-file.ts). */
const MARKER_FD = 3;

/** The path of `pid`'s descriptor `fd` when it is a vnode, else null. */
function vnodePathOf(pid: number, fd: number): string | null {
  const info = new Uint8Array(VNODE_FDINFOWITHPATH_SIZE);
  return libSystem().proc_pidfdinfo(pid, fd, PROC_PIDFDVNODEPATHINFO, ptr(info), info.length) === info.length ? vnodePath(info) : null;
}

/** Paths of `pid`'s open vnodes, or null when its descriptor table could not be read. */
function openVnodePaths(pid: number): string[] | null {
  const sys = libSystem();
  const need = sys.proc_pidinfo(pid, PROC_PIDLISTFDS, 0n, null, 0);
  if (need <= 0) return null;
  // Room for descriptors opened between the two calls; a longer table is cut, never overrun.
  const buffer = new Uint8Array(need + 32 * PROC_FDINFO_SIZE);
  const got = sys.proc_pidinfo(pid, PROC_PIDLISTFDS, 0n, ptr(buffer), buffer.length);
  if (got <= 0) return null;
  const info = new Uint8Array(VNODE_FDINFOWITHPATH_SIZE);
  const paths: string[] = [];
  for (const fd of vnodeFds(buffer, got)) {
    // A descriptor closed meanwhile is simply not there; it cannot have been the marker.
    if (sys.proc_pidfdinfo(pid, fd, PROC_PIDFDVNODEPATHINFO, ptr(info), info.length) === info.length) paths.push(vnodePath(info));
  }
  return paths;
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

let procArgs: Uint8Array | null = null;

/** The environment signal. An empty environment is what SIP-restricted binaries show: unreadable. */
function envMarker(pid: number, markers: readonly string[]): MarkerSignal {
  const size = kernArgMax();
  // One buffer of kern.argmax (1 MiB) for the process, not one per read.
  const buffer = (procArgs ??= new Uint8Array(size));
  const length = new BigUint64Array([BigInt(size)]);
  const mib = new Int32Array([CTL_KERN, KERN_PROCARGS2, pid]);
  if (libSystem().sysctl(ptr(mib), 3, ptr(buffer), ptr(length), null, 0n) !== 0) return MARKER_UNREADABLE;
  const env = environmentFromProcArgs(buffer.subarray(0, Number(length[0])));
  return env === "" ? MARKER_UNREADABLE : findMarker(env, markers);
}

export function createDarwinProcReader(): ProcReader {
  const ownUid = process.getuid?.() ?? -1;
  /** Lineage ids by `pid:start`: fixed at fork, and read again only for a process not seen before. */
  let idsCache = new Map<string, ProcIds | null>();
  const idsOf = (entry: ProcEntry, next: Map<string, ProcIds | null>): ProcIds | null => {
    const key = `${entry.pid}:${entry.startTime}`;
    let ids = idsCache.get(key);
    if (ids === undefined) ids = uniqueIdsOf(entry.pid);
    next.set(key, ids);
    return ids;
  };
  const reader: ProcReader = {
    list(): ProcEntry[] {
      const sys = libSystem();
      return listKinfoProcs().map((info) => {
        const sid = sys.getsid(info.pid);
        return {
          pid: info.pid,
          ppid: info.ppid,
          pgid: info.pgid,
          sid: sid < 0 ? -1 : sid,
          zombie: info.zombie,
          // xnu stops a task as a whole (task_suspend), so one word covers every thread.
          stopped: info.stopped,
          threads: 1,
          blocked: false,
          startTime: info.startTime,
          command: info.command,
        };
      });
    },
    markerOf(pid: number, markers: readonly string[]): MarkerSignal {
      const info = bsdInfo(pid);
      if (!info || info.uid !== ownUid) return null;
      // The leader got the marker as fd 3 and most descendants keep it there: one call, not a sweep.
      const third = vnodePathOf(pid, MARKER_FD);
      const quick = third === null ? null : markerFromPaths([third], markerDirectory(), markers);
      if (quick !== null) return quick;
      const paths = openVnodePaths(pid);
      const fd: MarkerSignal = paths === null ? MARKER_UNREADABLE : markerFromPaths(paths, markerDirectory(), markers);
      const verdict = markerVerdict(fd, typeof fd === "string" ? null : envMarker(pid, markers));
      if (verdict !== MARKER_UNREADABLE) return verdict;
      // A process that exited (or whose pid was reused) meanwhile is not unreadable, it is gone.
      return bsdInfo(pid)?.startTime === info.startTime ? MARKER_UNREADABLE : null;
    },
    lineage(leaderPid: number): TaskLineageView | null {
      const leaderIds = uniqueIdsOf(leaderPid);
      if (leaderIds === null) return null;
      const lineage = new TaskLineage(leaderIds);
      const unfollow = forkWatch()?.watch(leaderPid, (births) => lineage.absorb(births)) ?? (() => {});
      return view([lineage], unfollow);
    },
    sweepLineage(markers: readonly string[]): TaskLineageView | null {
      const lineages = markers.map(leaderIdsOf).filter((ids): ids is ProcIds => ids !== null).map((ids) => new TaskLineage(ids));
      return lineages.length === 0 ? null : view(lineages, () => {});
    },
  };
  /** One view over the lineages of the tasks a set stands for (one, or every swept one). */
  const view = (lineages: TaskLineage[], release: () => void): TaskLineageView => ({
    classify(table, members, markers) {
      const births = forkWatch()?.births() ?? new Map();
      const next = new Map<string, ProcIds | null>();
      const entries = [...table.values()].map((e) => ({ pid: e.pid, zombie: e.zombie, ids: idsOf(e, next) }));
      idsCache = next;
      const found = new Set<number>();
      const doubtful = new Set<number>();
      for (const lineage of lineages) {
        const one = lineage.classify(entries, members, births);
        for (const pid of one.members) found.add(pid);
        for (const pid of one.uncertain) doubtful.add(pid);
      }
      const uncertain: number[] = [];
      for (const pid of doubtful) {
        if (found.has(pid)) continue;
        // Its own marker settles it; "no marker" does not (a Node child loses the descriptor, a
        // restricted binary hides its environment, another uid's is never read).
        if (typeof reader.markerOf(pid, markers) === "string") found.add(pid);
        else uncertain.push(pid);
      }
      return { members: [...found], uncertain };
    },
    release,
  });
  return reader;
}
