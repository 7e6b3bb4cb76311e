// macOS's answers for process stamps (./process-stamp.ts): proc_pidinfo(PROC_PIDTBSDINFO) gives a
// process's start time (seconds.microseconds, platform/darwin/proc-reader.ts); the pid space is
// this host and this boot (sysctl kern.boottime), since macOS has no pid namespaces.
import os from "node:os";
import { ptr } from "bun:ffi";
import { bsdInfo } from "../darwin/proc-reader.ts";
import { libSystem } from "../darwin/libsystem.ts";
import { signalProbe, type ProcessTable } from "./process-stamp-table.ts";

const CTL_KERN = 1;
const KERN_BOOTTIME = 21;

/** kern.boottime as "seconds.microseconds" (struct timeval: i64 seconds, i32 microseconds), or undefined. */
function bootTime(): string | undefined {
  const mib = new Int32Array([CTL_KERN, KERN_BOOTTIME]);
  const value = new Uint8Array(16);
  const size = new BigUint64Array([16n]);
  if (libSystem().sysctl(ptr(mib), 2, ptr(value), ptr(size), null, 0n) !== 0) return undefined;
  const view = new DataView(value.buffer);
  return `${view.getBigInt64(0, true)}.${view.getInt32(8, true)}`;
}

export const darwinProcessTable: ProcessTable = {
  start(pid) {
    const info = bsdInfo(pid);
    if (info !== null && info.pid === pid) return info.zombie ? null : info.startTime;
    // proc_pidinfo also fails for a process it may not inspect: only ESRCH means none.
    return signalProbe(pid) === "none" ? null : undefined;
  },
  ownStart() {
    const info = bsdInfo(process.pid);
    return info !== null && info.pid === process.pid ? info.startTime : undefined;
  },
  pidSpace() {
    const boot = bootTime();
    return boot === undefined ? undefined : `${os.hostname()} ${boot}`;
  },
};
