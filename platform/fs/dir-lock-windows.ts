// The writers' directory lock on Windows: LockFileEx, exclusive and never waiting, on a lock file
// named after the directory's identity (volume serial number and file index, what fstat reports
// as dev/ino), in a directory serverfs keeps outside every workdir (the caller passes
// <state_dir>/locks/dirs). A directory handle cannot be byte-range locked (NTFS refuses it), and
// a lock file inside the workdir would show up in listings, so the lock lives beside the Bridge's
// lease files instead; serverfs processes sharing a state directory share these locks. Two
// directories whose identities collide would only share a lock: more waiting, never less safety.
// The handle is not inheritable (no SECURITY_ATTRIBUTES), so a child never keeps the lock; it
// dies with the handle, that is with the holder, however the holder ends. Lock files are never
// removed: removing one while another process has it open would let two holders lock two files.
import { ptr } from "bun:ffi";
import fs from "node:fs";
import path from "node:path";
import { INVALID_HANDLE_VALUE, kernel32, wide } from "../windows/kernel32.ts";
import type { DirectoryLock } from "./native.ts";
import { NtError } from "./windows.ts";

const GENERIC_READ = 0x80000000;
const FILE_SHARE_ALL = 0x1 | 0x2 | 0x4;
const OPEN_ALWAYS = 4;
const FILE_ATTRIBUTE_NORMAL = 0x80;
const FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000;
const FILE_ATTRIBUTE_DIRECTORY = 0x10;
const FILE_ATTRIBUTE_REPARSE_POINT = 0x400;
const LOCKFILE_FAIL_IMMEDIATELY = 0x1;
const LOCKFILE_EXCLUSIVE_LOCK = 0x2;
const ERROR_ACCESS_DENIED = 5;
const ERROR_LOCK_VIOLATION = 33;

/** The lock file of the directory held as `dirFd`, below `lockFilesDir`. */
export function directoryLockFile(dirFd: number, lockFilesDir: string): string {
  const st = fs.fstatSync(dirFd, { bigint: true });
  return path.win32.join(lockFilesDir, `${st.dev.toString(16)}-${st.ino.toString(16)}.lock`);
}

export function lockDirectoryWindows(dirFd: number, lockFilesDir: string): DirectoryLock | null {
  const file = directoryLockFile(dirFd, lockFilesDir);
  fs.mkdirSync(lockFilesDir, { recursive: true });
  const k = kernel32();
  const handle = k.CreateFileW(ptr(wide(file)), GENERIC_READ, FILE_SHARE_ALL, null, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, 0n);
  if (handle === INVALID_HANDLE_VALUE || handle === 0n) {
    const error = k.GetLastError();
    throw new NtError(error === ERROR_ACCESS_DENIED ? "EACCES" : "EIO", error, "CreateFileW");
  }
  const info = new Uint8Array(52);
  if (k.GetFileInformationByHandle(handle, ptr(info)) === 0) {
    const error = k.GetLastError();
    k.CloseHandle(handle);
    throw new NtError("EIO", error, "GetFileInformationByHandle");
  }
  // something planted at the lock file's name is refused, never locked through
  if (new DataView(info.buffer).getUint32(0, true) & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) {
    k.CloseHandle(handle);
    throw new NtError("ELOOP", 0, "CreateFileW");
  }
  const overlapped = new Uint8Array(32);
  if (k.LockFileEx(handle, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ptr(overlapped)) === 0) {
    const error = k.GetLastError();
    k.CloseHandle(handle);
    if (error === ERROR_LOCK_VIOLATION) return null;
    throw new NtError("EIO", error, "LockFileEx");
  }
  let held = true;
  return {
    release(): void {
      if (!held) return;
      held = false;
      k.UnlockFileEx(handle, 0, 1, 0, ptr(overlapped));
      k.CloseHandle(handle);
    },
  };
}
