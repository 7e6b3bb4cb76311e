// The error every FFI filesystem call throws: it carries the errno *name* (like node:fs errors),
// so callers handle FFI and node:fs failures with one `errnoCode()` switch. The number-to-name
// table is the running OS's own, which is what makes one class right for Linux and macOS alike.
import os from "node:os";

const ERRNO_NAMES: Map<number, string> = new Map(
  Object.entries(os.constants.errno).map(([name, num]) => [num as number, name]),
);

export class SysError extends Error {
  readonly code: string;
  readonly errno: number;
  constructor(errno: number, syscall: string) {
    const code = ERRNO_NAMES.get(errno) ?? `E${errno}`;
    // No path in the message: these never reach a caller verbatim, but stay clean anyway.
    super(`${syscall}: ${code}`);
    this.code = code;
    this.errno = errno;
  }
}

/**
 * A lookup that would leave the workdir root's mount, refused because the workdir sets
 * `cross_mounts = false`. Its errno stays EXDEV for generic handlers, but it is told apart from
 * the EXDEV that RESOLVE_BENEATH raises for an escape, which means something else to the caller.
 */
export class MountCrossingError extends SysError {
  constructor(syscall: string) {
    super(os.constants.errno.EXDEV, syscall);
  }
}
