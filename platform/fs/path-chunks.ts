// Relative lookups below PATH_MAX. macOS's PATH_MAX is 1024 bytes with the NUL (<sys/syslimits.h>),
// and namei refuses a longer path string with ENAMETOOLONG even when it is relative to a
// descriptor, so a deep request path is looked up in several openat(2) steps, each naming whole
// components whose joined UTF-8 length stays below the limit, from the descriptor the previous
// step returned. Pure: tested on Linux.

/** PATH_MAX on macOS, the terminating NUL included. */
export const DARWIN_PATH_MAX = 1024;

/**
 * Whole components grouped into relative paths of at most `limit - 1` bytes each, in order. A
 * component that alone is longer goes in a group of its own, and the kernel refuses it
 * (ENAMETOOLONG, as for any name over NAME_MAX). No parts: no groups.
 */
export function chunkParts(parts: readonly string[], limit: number = DARWIN_PATH_MAX): string[][] {
  const max = limit - 1;
  const out: string[][] = [];
  let cur: string[] = [];
  let bytes = 0;
  for (const part of parts) {
    const len = Buffer.byteLength(part, "utf8");
    const added = cur.length === 0 ? len : bytes + 1 + len;
    if (cur.length > 0 && added > max) {
      out.push(cur);
      cur = [part];
      bytes = len;
    } else {
      cur.push(part);
      bytes = added;
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}
