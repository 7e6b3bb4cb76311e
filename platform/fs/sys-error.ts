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

const ERRNO_NAMES = errnoNames(process.platform, os.constants.errno as Record<string, number>);

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
