// One Windows Job Object per task. KILL_ON_JOB_CLOSE means the tree dies when the last handle to
// the job closes (also when the Bridge dies); every process a member starts joins the job
// automatically, so there is no descendant walk to get wrong. Proof of stop is the kernel's own
// count, ActiveProcesses == 0, plus a scan for processes that left the job (./process-scan.ts).
//
// The job has no name and its handle is not inheritable, so nothing but the Bridge holds it: a
// provider cannot open its own job to set JOB_OBJECT_LIMIT_BREAKAWAY_OK (or any other limit). And
// neither BREAKAWAY_OK nor SILENT_BREAKAWAY_OK is ever set here, so no CREATE_BREAKAWAY_FROM_JOB
// child leaves this job: it is refused with ERROR_ACCESS_DENIED, or, where a job nested inside this
// one allows breakaway (Bun's libuv puts its children in such a job), it leaves only that inner job.
// A same-user process can still open the Bridge and copy this handle (docs/security.md); the
// stop's scan is what notices a child that got out that way.
import { ptr } from "bun:ffi";
import { kernel32 } from "./kernel32.ts";

const JobObjectBasicAccountingInformation = 1;
const JobObjectBasicProcessIdList = 3;
const JobObjectExtendedLimitInformation = 9;
export const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
export const JOB_OBJECT_LIMIT_BREAKAWAY_OK = 0x0800;
export const JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK = 0x1000;
/**
 * JOBOBJECT_EXTENDED_LIMIT_INFORMATION on x64: the BASIC_LIMIT_INFORMATION (two LARGE_INTEGERs,
 * then LimitFlags at 16, ... 64 bytes), IO_COUNTERS (48) and four SIZE_Ts: 144 bytes.
 */
const EXTENDED_LIMIT_SIZE = 144;
const LIMIT_FLAGS_OFFSET = 16;
const PROCESS_SET_QUOTA = 0x0100;
const PROCESS_TERMINATE = 0x0001;

export class JobObject {
  private constructor(private handle: bigint) {}

  /** A new unnamed kill-on-close job (null security attributes: the handle is not inheritable). */
  static create(): JobObject | null {
    const k = kernel32();
    const handle = k.CreateJobObjectW(null, null);
    if (handle === 0n) return null;
    const limits = new Uint8Array(EXTENDED_LIMIT_SIZE);
    new DataView(limits.buffer).setUint32(LIMIT_FLAGS_OFFSET, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, true);
    if (k.SetInformationJobObject(handle, JobObjectExtendedLimitInformation, ptr(limits), EXTENDED_LIMIT_SIZE) === 0) {
      k.CloseHandle(handle);
      return null;
    }
    return new JobObject(handle);
  }

  assignPid(pid: number): boolean {
    const k = kernel32();
    const process = k.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, 0, pid);
    if (process === 0n) return false;
    try {
      return k.AssignProcessToJobObject(this.handle, process) !== 0;
    } finally {
      k.CloseHandle(process);
    }
  }

  /** Put the calling process itself into this job. */
  assignSelf(): boolean {
    const k = kernel32();
    return k.AssignProcessToJobObject(this.handle, k.GetCurrentProcess()) !== 0;
  }

  terminate(exitCode: number): boolean {
    return kernel32().TerminateJobObject(this.handle, exitCode) !== 0;
  }

  /** LimitFlags as the kernel reports them (JOBOBJECT_EXTENDED_LIMIT_INFORMATION), or null on failure. */
  limitFlags(): number | null {
    const limits = new Uint8Array(EXTENDED_LIMIT_SIZE);
    if (kernel32().QueryInformationJobObject(this.handle, JobObjectExtendedLimitInformation, ptr(limits), EXTENDED_LIMIT_SIZE, null) === 0) {
      return null;
    }
    return new DataView(limits.buffer).getUint32(LIMIT_FLAGS_OFFSET, true);
  }

  /** ActiveProcesses from JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (offset 40), or null on failure. */
  activeProcesses(): number | null {
    const info = new Uint8Array(48);
    if (kernel32().QueryInformationJobObject(this.handle, JobObjectBasicAccountingInformation, ptr(info), 48, null) === 0) {
      return null;
    }
    return new DataView(info.buffer).getUint32(40, true);
  }

  /** Pids in the job (JOBOBJECT_BASIC_PROCESS_ID_LIST: two u32 counts, then ULONG_PTR ids). */
  pids(): number[] {
    const capacity = 1024;
    const list = new Uint8Array(8 + capacity * 8);
    if (kernel32().QueryInformationJobObject(this.handle, JobObjectBasicProcessIdList, ptr(list), list.length, null) === 0) {
      return [];
    }
    const view = new DataView(list.buffer);
    const count = Math.min(view.getUint32(4, true), capacity);
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(Number(view.getBigUint64(8 + i * 8, true)));
    return out;
  }

  close(): void {
    if (this.handle === 0n) return;
    kernel32().CloseHandle(this.handle);
    this.handle = 0n;
  }
}
