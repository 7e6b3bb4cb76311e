// One Windows Job Object per task. KILL_ON_JOB_CLOSE means the tree dies when the last handle to
// the job closes (also when the Bridge dies); every process a member starts joins the job
// automatically, so there is no descendant walk to get wrong. Proof of stop is the kernel's own
// count: ActiveProcesses == 0.
import { ptr } from "bun:ffi";
import { kernel32, wide } from "./kernel32.ts";

const JobObjectBasicAccountingInformation = 1;
const JobObjectBasicProcessIdList = 3;
const JobObjectExtendedLimitInformation = 9;
const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
const EXTENDED_LIMIT_SIZE = 144;
const PROCESS_SET_QUOTA = 0x0100;
const PROCESS_TERMINATE = 0x0001;
const JOB_OBJECT_QUERY = 0x0004;
const JOB_OBJECT_TERMINATE = 0x0008;
const ERROR_ALREADY_EXISTS = 183;

export class JobObject {
  private constructor(private handle: bigint) {}

  /** A new job (named, so a restarted Bridge can find a job some other process still holds open). */
  static create(name: string | null): JobObject | null {
    const k = kernel32();
    const handle = k.CreateJobObjectW(null, name === null ? null : ptr(wide(name)));
    if (handle === 0n) return null;
    // A named job that already exists belongs to someone else (or to a run id reused too soon):
    // joining it would put our provider under another holder's control.
    if (name !== null && k.GetLastError() === ERROR_ALREADY_EXISTS) {
      k.CloseHandle(handle);
      return null;
    }
    const limits = new Uint8Array(EXTENDED_LIMIT_SIZE);
    new DataView(limits.buffer).setUint32(16, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, true);
    if (k.SetInformationJobObject(handle, JobObjectExtendedLimitInformation, ptr(limits), EXTENDED_LIMIT_SIZE) === 0) {
      k.CloseHandle(handle);
      return null;
    }
    return new JobObject(handle);
  }

  /** An existing named job, or null when nobody holds it any more (then its processes are gone). */
  static open(name: string): JobObject | null {
    const handle = kernel32().OpenJobObjectW(JOB_OBJECT_QUERY | JOB_OBJECT_TERMINATE, 0, ptr(wide(name)));
    return handle === 0n ? null : new JobObject(handle);
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
