// The writers' directory lock on Linux and macOS: flock(2), exclusive and never waiting, on a
// descriptor of the directory itself that the lock opened for itself. Why a directory, and why
// flock: a rename replaces the file's inode, so a lock on the file would leave a waiter holding
// the replaced one; the directory whose entry changes is never replaced by that rename, and
// flock on its own descriptor needs no lock file at all (nothing appears in any listing).
// flock, not fcntl: fcntl is variadic and never bound through bun:ffi, and flock locks belong to
// the open file description, so a second descriptor, even in the same process, is refused too,
// and closing some other descriptor of the directory does not drop the lock (as fcntl's would).
// The kernel drops it when the holder closes it or dies, SIGKILL included. Bun opens every
// descriptor O_CLOEXEC, so a child process never inherits it.
import os from "node:os";
import type { DirectoryLock } from "./native-types.ts";

/** Linux <sys/file.h> and xnu bsd/sys/fcntl.h agree on these. */
export const LOCK_EX = 2;
export const LOCK_NB = 4;
export const LOCK_UN = 8;

const { EWOULDBLOCK } = os.constants.errno;

/**
 * One LOCK_EX|LOCK_NB attempt on `fd`, a descriptor of the directory opened for this lock alone,
 * which the lock now owns: closed when the attempt fails or on release. null: another holder has it.
 */
export function flockDirectory(fd: number, flock: (fd: number, operation: number) => void, close: (fd: number) => void): DirectoryLock | null {
  try {
    flock(fd, LOCK_EX | LOCK_NB);
  } catch (err) {
    close(fd);
    if ((err as { errno?: number }).errno === EWOULDBLOCK) return null;
    throw err;
  }
  let held = true;
  return {
    release(): void {
      if (!held) return;
      held = false;
      try {
        flock(fd, LOCK_UN);
      } finally {
        // closing the only descriptor of the open file description drops the lock anyway
        close(fd);
      }
    },
  };
}
