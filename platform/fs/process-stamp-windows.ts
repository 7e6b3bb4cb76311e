// Windows's answers for process stamps (./process-stamp.ts): GetProcessTimes gives a process's
// creation time (a FILETIME, 100 ns units since 1601), which with the pid names one process; pids
// are machine-wide, so the pid space is this host. A process that has exited but whose handle
// someone still holds is still openable: GetExitCodeProcess tells it apart (STILL_ACTIVE).
import os from "node:os";
import { ptr } from "bun:ffi";
import { kernel32 } from "../windows/kernel32.ts";
import { openProcess, STATUS_INVALID_CID, STATUS_INVALID_PARAMETER } from "./ntdll-windows.ts";
import type { ProcessTable } from "./process-stamp-table.ts";

const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const STILL_ACTIVE = 259;

/** The creation time of the process behind `handle`, or undefined when it cannot be read. */
function creationTime(handle: bigint): string | undefined {
  const times = new BigUint64Array(4);
  if (kernel32().GetProcessTimes(handle, ptr(times, 0), ptr(times, 8), ptr(times, 16), ptr(times, 24)) === 0) return undefined;
  return times[0]!.toString();
}

export const windowsProcessTable: ProcessTable = {
  start(pid) {
    const k = kernel32();
    // NtOpenProcess answers with its own status: no such process is STATUS_INVALID_CID
    // (OpenProcess's ERROR_INVALID_PARAMETER, which a later GetLastError could no longer be trusted
    // to report); any other refusal (a protected process) is "cannot tell".
    const opened = openProcess(pid, PROCESS_QUERY_LIMITED_INFORMATION);
    if ("status" in opened) return opened.status === STATUS_INVALID_CID || opened.status === STATUS_INVALID_PARAMETER ? null : undefined;
    const handle = opened.handle;
    try {
      const code = new Uint32Array(1);
      if (k.GetExitCodeProcess(handle, ptr(code)) === 0) return undefined;
      if (code[0] !== STILL_ACTIVE) return null;
      return creationTime(handle);
    } finally {
      k.CloseHandle(handle);
    }
  },
  ownStart() {
    // the pseudo-handle of the current process needs no closing
    return creationTime(kernel32().GetCurrentProcess());
  },
  pidSpace() {
    return os.hostname();
  },
};
