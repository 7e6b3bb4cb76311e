// Writer leases on Windows: LockFileEx on a HANDLE we open ourselves with CreateFileW (Bun's CRT
// fds are not usable for this). The handle is not inheritable (no SECURITY_ATTRIBUTES), so a
// provider cannot keep the lock alive; the lock dies with the handle, i.e. with the holder.
import { ptr } from "bun:ffi";
import { platformError } from "../errors.ts";
import type { FileLease, LeaseProvider } from "../types.ts";
import { INVALID_HANDLE_VALUE, kernel32, wide } from "./kernel32.ts";

const GENERIC_READ = 0x80000000;
const FILE_SHARE_ALL = 0x1 | 0x2 | 0x4;
const OPEN_EXISTING = 3;
const OPEN_ALWAYS = 4;
const FILE_ATTRIBUTE_NORMAL = 0x80;
const FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000;
const FILE_ATTRIBUTE_DIRECTORY = 0x10;
const FILE_ATTRIBUTE_REPARSE_POINT = 0x400;
const LOCKFILE_FAIL_IMMEDIATELY = 0x1;
const LOCKFILE_EXCLUSIVE_LOCK = 0x2;
const ERROR_FILE_NOT_FOUND = 2;
const ERROR_PATH_NOT_FOUND = 3;
const ERROR_ACCESS_DENIED = 5;
const ERROR_LOCK_VIOLATION = 33;

export function createWindowsLeases(): LeaseProvider {
  function acquire(path: string, create: boolean): FileLease | null {
    if (typeof path !== "string" || path === "" || path.includes("\0")) {
      throw platformError("LOCK_PATH_UNSAFE", "lock path is empty or invalid");
    }
    const k = kernel32();
    const handle = k.CreateFileW(
      ptr(wide(path)),
      GENERIC_READ,
      FILE_SHARE_ALL,
      null,
      create ? OPEN_ALWAYS : OPEN_EXISTING,
      FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
      0n,
    );
    if (handle === INVALID_HANDLE_VALUE || handle === 0n) {
      const error = k.GetLastError();
      if (error === ERROR_FILE_NOT_FOUND || error === ERROR_PATH_NOT_FOUND) {
        throw platformError("AGENT_LOCK_UNAVAILABLE", "lock file does not exist");
      }
      // A directory cannot be opened without FILE_FLAG_BACKUP_SEMANTICS: access denied.
      if (error === ERROR_ACCESS_DENIED) throw platformError("LOCK_PATH_UNSAFE", "lock path is not a regular file");
      throw platformError("AGENT_LOCK_UNAVAILABLE", `lock file cannot be opened (error ${error})`);
    }
    const info = new Uint8Array(52);
    if (k.GetFileInformationByHandle(handle, ptr(info)) === 0) {
      k.CloseHandle(handle);
      throw platformError("AGENT_LOCK_UNAVAILABLE", "lock file cannot be inspected");
    }
    const attributes = new DataView(info.buffer).getUint32(0, true);
    if (attributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)) {
      k.CloseHandle(handle);
      throw platformError("LOCK_PATH_UNSAFE", "lock path is a reparse point or directory");
    }
    const overlapped = new Uint8Array(32);
    if (k.LockFileEx(handle, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ptr(overlapped)) === 0) {
      const error = k.GetLastError();
      k.CloseHandle(handle);
      if (error === ERROR_LOCK_VIOLATION) return null;
      throw platformError("AGENT_LOCK_UNAVAILABLE", `lock could not be taken (error ${error})`);
    }
    let held = true;
    return {
      path,
      release(): void {
        if (!held) return;
        held = false;
        k.UnlockFileEx(handle, 0, 1, 0, ptr(overlapped));
        k.CloseHandle(handle);
      },
    };
  }
  return {
    tryAcquire: (path: string) => acquire(path, true),
    tryAcquireExisting: (path: string) => acquire(path, false),
  };
}
