// The writers' directory lock on Windows: NtLockFile, exclusive and never waiting, on a lock file
// named after the directory's identity (volume serial number and file index, what fstat reports
// as dev/ino), in a directory serverfs keeps outside every workdir (the caller passes
// <state_dir>/locks/dirs). A directory handle cannot be byte-range locked (NTFS refuses it), and
// a lock file inside the workdir would show up in listings, so the lock lives beside the Bridge's
// lease files instead; serverfs processes sharing a state directory share these locks. Two
// directories whose identities collide would only share a lock: more waiting, never less safety.
// The handle is not inheritable (no SECURITY_ATTRIBUTES), so a child never keeps the lock; it
// dies with the handle, that is with the holder, however the holder ends. Lock files are never
// removed: removing one while another process has it open would let two holders lock two files.
import fs from "node:fs";
import path from "node:path";
import type { DirectoryLock } from "./native-types.ts";
import { lockExclusiveNoWait, STATUS_FILE_LOCK_CONFLICT, STATUS_LOCK_NOT_GRANTED, unlock } from "./ntdll-windows.ts";
import * as nt from "./windows.ts";

/** The lock file of the directory held as `dirFd`, below `lockFilesDir`. */
export function directoryLockFile(dirFd: number, lockFilesDir: string): string {
  const st = fs.fstatSync(dirFd, { bigint: true });
  return path.win32.join(lockFilesDir, `${st.dev.toString(16)}-${st.ino.toString(16)}.lock`);
}

// Every failure is the NTSTATUS of the call that failed (NtCreateFile, NtLockFile), never a
// GetLastError read afterwards: busy is STATUS_LOCK_NOT_GRANTED (STATUS_FILE_LOCK_CONFLICT under Wine).
export function lockDirectoryWindows(dirFd: number, lockFilesDir: string): DirectoryLock | null {
  const file = directoryLockFile(dirFd, lockFilesDir);
  fs.mkdirSync(lockFilesDir, { recursive: true });
  // opened or created (FILE_OPEN_IF), as itself: a link planted at the name is not followed
  const handle = nt.openPathNoFollow(file, nt.A.READ_DATA | nt.A.READ_ATTRIBUTES, 0, nt.DISP.OPEN_IF);
  try {
    // something planted at the lock file's name is refused, never locked through
    if (nt.attributeTag(handle).attributes & (nt.ATTR_DIRECTORY | nt.ATTR_REPARSE_POINT)) throw new nt.NtError("ELOOP", 0, "NtCreateFile");
    const st = lockExclusiveNoWait(handle, 0n, 1n);
    if (st === STATUS_LOCK_NOT_GRANTED || st === STATUS_FILE_LOCK_CONFLICT) {
      nt.ntClose(handle);
      return null;
    }
    nt.ntCheck(st, "NtLockFile");
  } catch (err) {
    nt.ntClose(handle);
    throw err;
  }
  let held = true;
  return {
    release(): void {
      if (!held) return;
      held = false;
      unlock(handle, 0n, 1n);
      nt.ntClose(handle);
    },
  };
}
