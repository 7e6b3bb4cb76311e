// The error every FFI filesystem call throws: it carries the errno *name* (like node:fs errors),
// so callers handle FFI and node:fs failures with one `errnoCode()` switch. The number-to-name
// table is the running OS's own (with the few names Node's table lacks there), which is what
// makes one class right for Linux and macOS alike.
import os from "node:os";

/**
 * Numbers a kernel uses that Node's table (os.constants.errno) has no name for, by platform.
 * - darwin 93, ENOATTR (xnu bsd/sys/errno.h: "Attribute not found"): getxattr and removexattr
 *   of a name the file does not carry. Node lists no ENOATTR (Linux spells it ENODATA, which
 *   Node has), so without this an xattr that vanished mid-copy surfaced as "E93".
 */
const NAMES_NODE_LACKS: Partial<Record<NodeJS.Platform, ReadonlyArray<readonly [number, string]>>> = {
  darwin: [[93, "ENOATTR"]],
};

/** The number-to-name table for `platform`: Node's own, plus what it lacks there. Pure. */
export function errnoNames(platform: NodeJS.Platform, nodeTable: Readonly<Record<string, number>>): Map<number, string> {
  const names = new Map(Object.entries(nodeTable).map(([name, num]) => [num, name]));
  for (const [num, name] of NAMES_NODE_LACKS[platform] ?? []) if (!names.has(num)) names.set(num, name);
  return names;
}

// Built at the first failure, not at load: every start of serve loads this module, and building
// the table costs ~2 ms there (most processes never see a failed FFI call before they answer).
let ERRNO_NAMES: Map<number, string> | null = null;

export class SysError extends Error {
  readonly code: string;
  readonly errno: number;
  constructor(errno: number, syscall: string) {
    ERRNO_NAMES ??= errnoNames(process.platform, os.constants.errno as Record<string, number>);
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

// The Windows backend's errors (platform/fs/windows.ts throws them). They live here, beside
// SysError, so the file layer can tell them apart without importing that backend.

/** An NT status mapped to the POSIX errno *name* the rest of the file layer switches on. */
export class NtError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    syscall: string,
  ) {
    // No path in the message: the name stays with the caller, who knows what to show.
    super(`${syscall}: ${code} (0x${status.toString(16)})`);
  }
}

/** A reparse point that is not a symbolic link (junction, mount point, cloud placeholder...). */
export class ReparsePointError extends NtError {
  constructor(syscall: string) {
    super("ELOOP", 0xc000050b, syscall);
  }
}

/** A component spelled as an 8.3 short name that reaches a different long name. */
export class ShortNameError extends NtError {
  constructor(syscall: string) {
    super("EINVAL", 0xc0000033, syscall);
  }
}
