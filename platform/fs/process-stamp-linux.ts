// Linux's answers for process stamps (./process-stamp.ts), from /proc. The start time is field 22
// of /proc/<pid>/stat (clock ticks since boot), the pid space is this boot (boot_id) and this pid
// namespace (/proc/self/ns/pid). A /proc that belongs to another pid namespace than ours (an
// `unshare -p` without a fresh /proc) numbers processes differently: then nothing is judged.
import fs from "node:fs";
import { parseProcStat, readProcEntry, readProcFile } from "../linux/proc-reader.ts";
import { signalProbe, type ProcessTable } from "./process-stamp-table.ts";

export const linuxProcessTable: ProcessTable = {
  start(pid) {
    const entry = readProcEntry(pid);
    if (entry !== null) return entry.zombie ? null : entry.startTime;
    return signalProbe(pid) === "none" ? null : undefined;
  },
  ownStart() {
    const entry = parseProcStat(readProcFile("/proc/self/stat"));
    return entry !== null && entry.pid === process.pid ? entry.startTime : undefined;
  },
  pidSpace() {
    return `${fs.readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim()} ${fs.readlinkSync("/proc/self/ns/pid")}`;
  },
};
