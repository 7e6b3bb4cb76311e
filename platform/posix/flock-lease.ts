// Writer leases on POSIX: flock(LOCK_EX|LOCK_NB) on a descriptor of our own. flock locks belong
// to the open file description, so a second open in the same process is refused too (a useful
// in-process guard), closing an unrelated descriptor does not drop the lock (unlike fcntl F_SETLK),
// and the kernel releases it when the holder dies. Bun opens files with O_CLOEXEC, so a provider
// child never inherits the lock and cannot keep it alive after the holder is gone.
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { platformError } from "../errors.ts";
import type { FileLease, LeaseProvider } from "../types.ts";

const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;

export interface FlockBinding {
  flock(fd: number, operation: number): number;
  errno(): number;
  /** EWOULDBLOCK on this OS (11 on Linux, 35 on macOS). */
  wouldBlock: number;
}

export function createFlockLeases(binding: FlockBinding): LeaseProvider {
  function acquire(path: string, create: boolean): FileLease | null {
    if (typeof path !== "string" || path === "" || path.includes("\0")) {
      throw platformError("LOCK_PATH_UNSAFE", "lock path is empty or invalid");
    }
    // O_NOFOLLOW: a symlink planted at the lock path is refused, not followed. O_NONBLOCK: a FIFO
    // planted there must not hang the open; it is refused by the regular-file check below.
    const flags =
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (create ? constants.O_CREAT : 0);
    let fd: number;
    try {
      fd = openSync(path, flags, 0o600);
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      if (code === "ELOOP") throw platformError("LOCK_PATH_UNSAFE", "lock file is a symbolic link");
      if (code === "EISDIR" || code === "ENXIO" || code === "ENODEV") {
        throw platformError("LOCK_PATH_UNSAFE", "lock path is not a regular file");
      }
      if (code === "ENOENT") throw platformError("AGENT_LOCK_UNAVAILABLE", "lock file does not exist");
      throw platformError("AGENT_LOCK_UNAVAILABLE", `lock file cannot be opened (${String(code ?? "error")})`);
    }
    try {
      if (!fstatSync(fd).isFile()) throw platformError("LOCK_PATH_UNSAFE", "lock path is not a regular file");
      if (binding.flock(fd, LOCK_EX | LOCK_NB) !== 0) {
        const errno = binding.errno();
        if (errno === binding.wouldBlock) {
          closeSync(fd);
          return null;
        }
        throw platformError("AGENT_LOCK_UNAVAILABLE", `lock could not be taken (errno ${errno})`);
      }
    } catch (err) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      throw err;
    }
    let held = true;
    return {
      path,
      release(): void {
        if (!held) return;
        held = false;
        binding.flock(fd, LOCK_UN);
        closeSync(fd);
      },
    };
  }
  return {
    tryAcquire: (path: string) => acquire(path, true),
    tryAcquireExisting: (path: string) => acquire(path, false),
  };
}
