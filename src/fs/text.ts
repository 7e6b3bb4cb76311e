// Checks on caller-supplied text before anything touches the disk.

import type { Target } from "./context.ts";
import { fail } from "./fail.ts";

/** NUL or an unpaired surrogate cannot be written as UTF-8 text. */
export function refuseBinaryText(t: Target, s: string): void {
  if (typeof s !== "string") throw fail("INVALID_ARGUMENT", t.alias, t.rel, "text arguments must be strings");
  if (s.includes("\0") || !s.isWellFormed()) throw fail("BINARY_CONTENT_NOT_ALLOWED", t.alias, t.rel);
}

export const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
