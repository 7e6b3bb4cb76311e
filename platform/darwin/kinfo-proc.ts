// The macOS process table in one call: sysctl {CTL_KERN, KERN_PROC, KERN_PROC_ALL} copies out one
// struct kinfo_proc per process, zombies included, for every uid. proc_pidinfo(PROC_PIDTBSDINFO)
// answers only for processes of the caller's uid (xnu bsd/kern/proc_info.c, proc_security_policy
// with CHECK_SAME_USER), so a table built from it cannot see a setuid descendant such as sudo.
// sysctl_prochandle (bsd/kern/kern_sysctl.c) applies no uid filter for KERN_PROC_ALL.
import { ptr } from "bun:ffi";
import { darwinErrno, libSystem } from "./libsystem.ts";

export const CTL_KERN = 1;
const KERN_PROC = 14;
const KERN_PROC_ALL = 0;
/** sys/errno.h: the buffer was too small (the table grew between the two calls). */
const ENOMEM = 12;

// struct kinfo_proc for a 64-bit caller (sys/sysctl.h; the kernel fills user64_kinfo_proc):
// kp_proc is struct extern_proc (296 bytes), kp_eproc follows. Offsets computed from the header
// with natural LP64 alignment and asserted by test/platform/darwin-pure.test.ts.
export const KINFO_PROC_SIZE = 648;
export const KINFO = {
  startSec: 0, // kp_proc.p_un.__p_starttime.tv_sec (int64)
  startUsec: 8, // kp_proc.p_un.__p_starttime.tv_usec (int32)
  stat: 36, // kp_proc.p_stat (char)
  pid: 40, // kp_proc.p_pid
  comm: 243, // kp_proc.p_comm[MAXCOMLEN + 1]
  commLength: 17,
  uid: 420, // kp_eproc.e_ucred.cr_uid (effective uid)
  ppid: 560, // kp_eproc.e_ppid
  pgid: 564, // kp_eproc.e_pgid
} as const;

// sys/proc.h p_stat values: SSTOP is a job-control stop, which xnu applies to the whole task.
export const SSTOP = 4;
export const SZOMB = 5;

/** One process as kinfo_proc (here) and proc_bsdinfo (proc-reader.ts) both describe it. */
export interface KinfoEntry {
  pid: number;
  ppid: number;
  pgid: number;
  uid: number;
  zombie: boolean;
  stopped: boolean;
  command: string;
  /** `<tv_sec>.<tv_usec>`, as proc_bsdinfo's pbi_start_tvsec/pbi_start_tvusec spell the same p_start. */
  startTime: string;
}

/** Decode `bytes` of a KERN_PROC_ALL answer; a trailing partial record is ignored. Pure. */
export function parseKinfoProcs(buffer: Uint8Array, bytes: number): KinfoEntry[] {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const decoder = new TextDecoder();
  const out: KinfoEntry[] = [];
  const end = Math.min(bytes, buffer.length);
  for (let at = 0; at + KINFO_PROC_SIZE <= end; at += KINFO_PROC_SIZE) {
    const pid = view.getInt32(at + KINFO.pid, true);
    if (pid <= 0) continue; // the kernel task (pid 0) is never ours
    const comm = buffer.subarray(at + KINFO.comm, at + KINFO.comm + KINFO.commLength);
    const nul = comm.indexOf(0);
    const stat = view.getInt8(at + KINFO.stat);
    out.push({
      pid,
      ppid: view.getInt32(at + KINFO.ppid, true),
      pgid: view.getInt32(at + KINFO.pgid, true),
      uid: view.getUint32(at + KINFO.uid, true),
      zombie: stat === SZOMB,
      stopped: stat === SSTOP,
      command: decoder.decode(nul === -1 ? comm : comm.subarray(0, nul)),
      startTime: `${view.getBigInt64(at + KINFO.startSec, true)}.${view.getInt32(at + KINFO.startUsec, true)}`,
    });
  }
  return out;
}

/** Every process on the host, of every uid. Throws when the table cannot be read. */
export function listKinfoProcs(): KinfoEntry[] {
  const sys = libSystem();
  const mib = new Int32Array([CTL_KERN, KERN_PROC, KERN_PROC_ALL]);
  const size = new BigUint64Array(1);
  for (let attempt = 0; attempt < 8; attempt++) {
    size[0] = 0n;
    if (sys.sysctl(ptr(mib), 3, null, ptr(size), null, 0n) !== 0) throw new Error("sysctl KERN_PROC_ALL size failed");
    // The kernel already adds slack (KERN_PROCSLOP); more room for forks between the two calls.
    const buffer = new Uint8Array(Number(size[0]) + 64 * KINFO_PROC_SIZE);
    size[0] = BigInt(buffer.length);
    if (sys.sysctl(ptr(mib), 3, ptr(buffer), ptr(size), null, 0n) === 0) return parseKinfoProcs(buffer, Number(size[0]));
    // ENOMEM: the table outgrew the buffer meanwhile; ask for the size again.
    if (darwinErrno() === ENOMEM) continue;
    throw new Error("sysctl KERN_PROC_ALL failed");
  }
  throw new Error("sysctl KERN_PROC_ALL kept growing");
}

