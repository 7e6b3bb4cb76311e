// Test-only views of Windows processes that do not go through the code under test: a fresh
// Toolhelp snapshot of every process and a per-pid liveness check by OpenProcess. The Job Object
// tests use them to prove a stop independently of the job's own ActiveProcesses count (Wine's
// tasklist prints nothing, so it cannot serve as the independent check).
import { dlopen, FFIType, ptr } from "bun:ffi";

export const onWindows = process.platform === "win32";

type Lib = ReturnType<typeof open>;
let lib: Lib | null = null;
function open() {
  return dlopen("kernel32.dll", {
    CreateToolhelp32Snapshot: { args: [FFIType.u32, FFIType.u32], returns: FFIType.u64 },
    Process32FirstW: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
    Process32NextW: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
    OpenProcess: { args: [FFIType.u32, FFIType.i32, FFIType.u32], returns: FFIType.u64 },
    GetExitCodeProcess: { args: [FFIType.u64, FFIType.ptr], returns: FFIType.i32 },
    CloseHandle: { args: [FFIType.u64], returns: FFIType.i32 },
  }).symbols;
}
const k = (): Lib => (lib ??= open());

const TH32CS_SNAPPROCESS = 0x2;
const PROCESSENTRY32W_SIZE = 568;
const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
const STILL_ACTIVE = 259;

export interface ProcessRow {
  pid: number;
  ppid: number;
  exe: string;
  /** 0 for a process that has exited but whose object someone still holds a handle to. */
  threads: number;
}

/** Every process in the system right now (Toolhelp32 snapshot). */
export function processTable(): ProcessRow[] {
  const snapshot = k().CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snapshot === 0xffffffffffffffffn) throw new Error("CreateToolhelp32Snapshot failed");
  const rows: ProcessRow[] = [];
  try {
    const entry = new Uint8Array(PROCESSENTRY32W_SIZE);
    const view = new DataView(entry.buffer);
    view.setUint32(0, PROCESSENTRY32W_SIZE, true);
    for (let ok = k().Process32FirstW(snapshot, ptr(entry)); ok !== 0; ok = k().Process32NextW(snapshot, ptr(entry))) {
      let exe = "";
      for (let o = 44; o < PROCESSENTRY32W_SIZE - 1; o += 2) {
        const unit = view.getUint16(o, true);
        if (unit === 0) break;
        exe += String.fromCharCode(unit);
      }
      rows.push({ pid: view.getUint32(8, true), ppid: view.getUint32(32, true), exe, threads: view.getUint32(28, true) });
    }
  } finally {
    k().CloseHandle(snapshot);
  }
  return rows;
}

/** True while a process with this pid runs (OpenProcess + GetExitCodeProcess == STILL_ACTIVE). */
export function processAlive(pid: number): boolean {
  const handle = k().OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
  if (handle === 0n) return false;
  try {
    const code = new Uint32Array(1);
    return k().GetExitCodeProcess(handle, ptr(code)) !== 0 && code[0] === STILL_ACTIVE;
  } finally {
    k().CloseHandle(handle);
  }
}

/** Every process descending from `root` (root included), from one snapshot. */
export function descendants(root: number, table = processTable()): ProcessRow[] {
  const found = new Map<number, ProcessRow>();
  const self = table.find((r) => r.pid === root);
  if (self) found.set(root, self);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of table) {
      if (!found.has(row.pid) && found.has(row.ppid) && row.pid !== row.ppid) {
        found.set(row.pid, row);
        grew = true;
      }
    }
  }
  return [...found.values()];
}

/** Wine exports wine_get_version from its ntdll; real Windows does not. Null off Wine. */
export const wineVersion: string | null = (() => {
  if (!onWindows) return null;
  try {
    const ntdll = dlopen("ntdll.dll", { wine_get_version: { args: [], returns: FFIType.cstring } });
    const version = String(ntdll.symbols.wine_get_version());
    ntdll.close();
    return version.length > 0 ? version : null;
  } catch {
    return null;
  }
})();
export const isWine: boolean = wineVersion !== null;

// rmSync(dir, {recursive}) fails with EFAULT under Wine 8.0: the product's own removal walks
// handle-relative NT opens on Windows and never follows a link (platform/fs/remove-tree-windows.ts).
export { removeTree } from "../../platform/fs/remove-tree.ts";

type Security = ReturnType<typeof openSecurity>;
let security: Security | null = null;
function openSecurity() {
  return dlopen("advapi32.dll", {
    OpenProcessToken: { args: [FFIType.u64, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
    GetTokenInformation: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
    CreateRestrictedToken: {
      args: [FFIType.u64, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.u32, FFIType.ptr, FFIType.ptr],
      returns: FFIType.i32,
    },
    ImpersonateLoggedOnUser: { args: [FFIType.u64], returns: FFIType.i32 },
    RevertToSelf: { args: [], returns: FFIType.i32 },
  }).symbols;
}
const kfile = () =>
  dlopen("kernel32.dll", {
    GetCurrentProcess: { args: [], returns: FFIType.u64 },
    CreateFileW: { args: [FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.ptr, FFIType.u32, FFIType.u32, FFIType.u64], returns: FFIType.u64 },
    CloseHandle: { args: [FFIType.u64], returns: FFIType.i32 },
    GetLastError: { args: [], returns: FFIType.u32 },
  }).symbols;

/**
 * Opens `path` (GENERIC_READ) as another identity: this user's token with the user SID made
 * deny-only (CreateRestrictedToken), so only ACEs for its groups (Everyone, Administrators, ...)
 * can grant access. Returns 0 when the open succeeded, else the Win32 error.
 */
export function openAsDenyOnlyUser(path: string): number {
  const s = (security ??= openSecurity());
  const k32 = kfile();
  const TOKEN_ASSIGN_PRIMARY = 0x1, TOKEN_DUPLICATE = 0x2, TOKEN_IMPERSONATE = 0x4, TOKEN_QUERY = 0x8;
  const token = new BigUint64Array(1);
  const access = TOKEN_ASSIGN_PRIMARY | TOKEN_DUPLICATE | TOKEN_IMPERSONATE | TOKEN_QUERY;
  if (s.OpenProcessToken(k32.GetCurrentProcess(), access, ptr(token)) === 0) throw new Error("OpenProcessToken failed");
  // TOKEN_USER is one SID_AND_ATTRIBUTES: exactly the SidsToDisable array CreateRestrictedToken takes.
  const user = new Uint8Array(256);
  const length = new Uint32Array(1);
  if (s.GetTokenInformation(token[0]!, 1, ptr(user), user.length, ptr(length)) === 0) throw new Error("GetTokenInformation failed");
  const restricted = new BigUint64Array(1);
  if (s.CreateRestrictedToken(token[0]!, 0, 1, ptr(user), 0, null, 0, null, ptr(restricted)) === 0) {
    throw new Error("CreateRestrictedToken failed");
  }
  if (s.ImpersonateLoggedOnUser(restricted[0]!) === 0) throw new Error("ImpersonateLoggedOnUser failed");
  try {
    const handle = k32.CreateFileW(ptr(wideString(path)), 0x80000000, 0, null, 3, 0, 0n);
    if (handle === 0xffffffffffffffffn) return k32.GetLastError();
    k32.CloseHandle(handle);
    return 0;
  } finally {
    s.RevertToSelf();
    k32.CloseHandle(restricted[0]!);
    k32.CloseHandle(token[0]!);
  }
}

function wideString(text: string): Uint16Array {
  const out = new Uint16Array(text.length + 1);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

// ---- Job Object views for test/platform/windows-job.test.ts ----

type JobLib = ReturnType<typeof openJobLib>;
let jobLib: JobLib | null = null;
function openJobLib() {
  return dlopen("kernel32.dll", {
    CreateJobObjectW: { args: [FFIType.ptr, FFIType.ptr], returns: FFIType.u64 },
    SetInformationJobObject: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    QueryInformationJobObject: { args: [FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32, FFIType.ptr], returns: FFIType.i32 },
    AssignProcessToJobObject: { args: [FFIType.u64, FFIType.u64], returns: FFIType.i32 },
    TerminateJobObject: { args: [FFIType.u64, FFIType.u32], returns: FFIType.i32 },
    OpenJobObjectW: { args: [FFIType.u32, FFIType.i32, FFIType.ptr], returns: FFIType.u64 },
    OpenProcess: { args: [FFIType.u32, FFIType.i32, FFIType.u32], returns: FFIType.u64 },
    WaitForSingleObject: { args: [FFIType.u64, FFIType.u32], returns: FFIType.u32 },
    CloseHandle: { args: [FFIType.u64], returns: FFIType.i32 },
  }).symbols;
}
const j = (): JobLib => (jobLib ??= openJobLib());

/** Whether a job of this name can be opened (JOB_OBJECT_ALL_ACCESS) by this process. */
export function canOpenJobByName(name: string): boolean {
  const handle = j().OpenJobObjectW(0x1f003f, 0, ptr(wideString(name)));
  if (handle === 0n) return false;
  j().CloseHandle(handle);
  return true;
}

/**
 * A job as a provider would have it if it could loosen its own: kill-on-close plus
 * JOB_OBJECT_LIMIT_BREAKAWAY_OK. serverfs never makes one; a test needs one to have a process that
 * really left a job. Has the methods platform/windows/job-stop.ts stops a job through.
 */
export function looseJob() {
  const handle = j().CreateJobObjectW(null, null);
  if (handle === 0n) throw new Error("CreateJobObjectW failed");
  const limits = new Uint8Array(144);
  new DataView(limits.buffer).setUint32(16, 0x2000 | 0x0800, true); // KILL_ON_JOB_CLOSE | BREAKAWAY_OK
  if (j().SetInformationJobObject(handle, 9, ptr(limits), 144) === 0) throw new Error("SetInformationJobObject failed");
  return {
    assign(pid: number): boolean {
      const process = j().OpenProcess(0x0101, 0, pid); // PROCESS_SET_QUOTA | PROCESS_TERMINATE
      if (process === 0n) return false;
      try {
        return j().AssignProcessToJobObject(handle, process) !== 0;
      } finally {
        j().CloseHandle(process);
      }
    },
    activeProcesses(): number | null {
      const info = new Uint8Array(48);
      return j().QueryInformationJobObject(handle, 1, ptr(info), 48, null) === 0 ? null : new DataView(info.buffer).getUint32(40, true);
    },
    pids(): number[] {
      const list = new Uint8Array(8 + 64 * 8);
      if (j().QueryInformationJobObject(handle, 3, ptr(list), list.length, null) === 0) return [];
      const view = new DataView(list.buffer);
      return Array.from({ length: Math.min(view.getUint32(4, true), 64) }, (_, i) => Number(view.getBigUint64(8 + i * 8, true)));
    },
    terminate(code: number): boolean {
      return j().TerminateJobObject(handle, code) !== 0;
    },
    close(): void {
      j().CloseHandle(handle);
    },
  };
}

/** A SYNCHRONIZE handle to a running process (opened while it runs, so a reused pid is never waited on). */
export function waitable(pid: number): bigint {
  const handle = j().OpenProcess(0x00100000, 0, pid);
  if (handle === 0n) throw new Error(`process ${pid} is not running`);
  return handle;
}

/** True once the process has exited (WaitForSingleObject; the bound only turns a hang into a failure). */
export function exits(handle: bigint): boolean {
  try {
    return j().WaitForSingleObject(handle, 20_000) === 0;
  } finally {
    j().CloseHandle(handle);
  }
}

/** `p` spelled through its volume's GUID path (`\\?\Volume{GUID}\rest`), from GetVolumeNameForVolumeMountPointW. */
export function volumeGuidPath(p: string): string {
  const k = dlopen("kernel32.dll", { GetVolumeNameForVolumeMountPointW: { args: [FFIType.ptr, FFIType.ptr, FFIType.u32], returns: FFIType.i32 } });
  try {
    const root = p.slice(0, 3); // "C:\"
    const out = new Uint16Array(64);
    if (k.symbols.GetVolumeNameForVolumeMountPointW(ptr(wideString(root)), ptr(out), out.length) === 0) throw new Error("GetVolumeNameForVolumeMountPointW failed");
    return String.fromCharCode(...out.slice(0, out.indexOf(0))) + p.slice(3);
  } finally {
    k.close();
  }
}

/** The 8.3 spelling of an existing path (GetShortPathNameW); the long name where none was generated. */
export function shortPathName(p: string): string {
  const k = dlopen("kernel32.dll", { GetShortPathNameW: { args: [FFIType.ptr, FFIType.ptr, FFIType.u32], returns: FFIType.u32 } });
  try {
    const out = new Uint16Array(1024);
    const n = k.symbols.GetShortPathNameW(ptr(wideString(p)), ptr(out), out.length);
    if (n === 0 || n >= out.length) throw new Error("GetShortPathNameW failed");
    return String.fromCharCode(...out.slice(0, n));
  } finally {
    k.close();
  }
}
