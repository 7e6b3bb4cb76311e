// Which extended attributes a macOS replacement carries over (docs/platform.md, "macOS: verified /
// written / checks to run on a Mac"). Since macOS 13 the kernel stamps `com.apple.provenance` on
// everyday files and refuses it to fsetxattr from a non-root process (EPERM), so copying every
// attribute made every edit of such a file fail with METADATA_PRESERVATION_FAILED. The skip list
// is only for attributes that the system owns and that user processes cannot set, and dropping
// them never widens access. Every other attribute is still copied, and a copy that fails still
// fails the edit (fail closed).

/**
 * System-managed attributes left off the replacement, with the reason for each:
 * - com.apple.provenance: the kernel's launch-provenance record (macOS 13+). Only the kernel
 *   writes it (EPERM for everyone else), and it re-stamps the new file itself when needed.
 * - com.apple.macl: the TCC/sandbox list of apps the user let open this file. The sandbox
 *   extension owns it (EPERM for user processes). Without it an app just asks the user again:
 *   access only narrows.
 *
 * Deliberately NOT skipped:
 * - com.apple.quarantine: Gatekeeper's "downloaded from the internet" flag. It is security state
 *   the user can see, and any process may set it. Dropping it would quietly clear a warning.
 * - com.apple.rootless: the System Integrity Protection marker. Dropping it would remove a
 *   protection. A file that carries it is SIP-protected, so the kernel refuses the replace anyway.
 *   Keeping it in the copy keeps the failure closed (METADATA_PRESERVATION_FAILED).
 */
export const DARWIN_SYSTEM_XATTRS: readonly string[] = ["com.apple.provenance", "com.apple.macl"];

/** Whether a replacement must carry `name` over (and fail if it cannot). Pure: tested on Linux. */
export function darwinPreservesXattr(name: string): boolean {
  return !DARWIN_SYSTEM_XATTRS.includes(name);
}

/**
 * The value of each listed attribute, read one by one after flistxattr named them. One removed
 * between the list and its read (ENOATTR: another process, or the kernel, dropped it) is gone
 * from the source, so it is gone from the copy too: skipped, not an error. Any other failure
 * of a read (ERANGE, EPERM, EIO) still throws, and the edit fails closed. Pure over `read`:
 * tested on Linux.
 */
export function readListedXattrs(names: Iterable<string>, read: (name: string) => Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const name of names) {
    if (name === "") continue;
    let value: Buffer;
    try {
      value = read(name);
    } catch (err) {
      if ((err as { code?: unknown }).code === "ENOATTR") continue;
      throw err;
    }
    out.set(name, value);
  }
  return out;
}
