// read_text_file with tail_lines: the last N lines, found by reading backwards from the end of
// the held descriptor in fixed blocks, never from the start. What "a line" is matches the forward
// read exactly (docs/tools.md, `read_text_file`): a run of bytes ending in `\n`, or a non-empty
// run after the last `\n`; so a final newline ends the last line and does not start an empty one.
//
// Memory is bounded by max_read_bytes: no byte below `size - max_read_bytes - 1` is ever read,
// because a line starting there could not be returned anyway. Only the returned bytes are
// decoded, and they always start right after a `\n` (or at the start of the text), which never
// falls inside a UTF-8 sequence, so a block boundary can never split a character that is kept.

import fs from "node:fs";
import type { Target, Workspace } from "./context.ts";
import { fail } from "./fail.ts";
import { readFully } from "./open.ts";
import { BOM, fatalUtf8, readHeld, SNIFF, YIELD_EVERY_MS } from "./read.ts";
import { revisionOf } from "./revision.ts";

export interface TailTextOutput {
  workdir: string;
  path: string;
  /** 1 when the returned lines reach the start of the file (so line numbers are known), else null. */
  start_line: number | null;
  end_line: number | null;
  content: string;
  bytes_returned: number;
  /** Always false: nothing comes after the last line. */
  has_more: false;
  next_start_line: null;
  revision: string;
  lines_returned: number;
  /** Lines exist before the returned ones (the file has more than N lines, or the byte cap cut). */
  has_earlier_lines: boolean;
}

/** Bytes per backward read. Exported for tests that need a file spanning several blocks. */
export const TAIL_BLOCK = 64 * 1024;

/** Test seam: called after each backward block is read, so a real writer can act mid-read. Null outside tests. */
export const tailReadHooks: { afterBlock: ((blockStart: number) => void) | null } = { afterBlock: null };

const NL = 10;

export async function readTailLines(ws: Workspace, t: Target, lines: number, signal?: AbortSignal): Promise<TailTextOutput> {
  const maxBytes = t.wd.workdir.max_read_bytes;
  return readHeld(ws, t, (fd, revision, size) => tail(t, fd, revision, size, lines, maxBytes, signal));
}

async function tail(t: Target, fd: number, revision: string, size: number, want: number, maxBytes: number, signal?: AbortSignal): Promise<TailTextOutput> {
  // The same BINARY_FILE verdict as the forward read: a NUL in the first 1 KiB.
  const head = Buffer.allocUnsafe(Math.min(size, SNIFF));
  if (readFully(fd, head, 0) !== head.length) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
  if (head.indexOf(0) !== -1) throw fail("BINARY_FILE", t.alias, t.rel);
  const textStart = head.length >= 3 && head[0] === BOM[0] && head[1] === BOM[1] && head[2] === BOM[2] ? 3 : 0;

  // Lowest byte worth reading: a `\n` there starts a line of exactly maxBytes bytes.
  const floor = Math.max(textStart, size - maxBytes - 1);
  const blocks: Buffer[] = []; // held bytes [pos, size), last block first
  let pos = size;
  let found = 0; // line starts found after a `\n`
  let start = -1; // offset of the first returned byte, once known
  let lastYield = performance.now();

  scan: while (pos > floor) {
    if (performance.now() - lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((r) => setImmediate(r));
      lastYield = performance.now();
    }
    if (signal?.aborted) throw fail("READ_FAILED", t.alias, t.rel, "read was cancelled");
    const from = Math.max(floor, pos - TAIL_BLOCK);
    const block = Buffer.allocUnsafe(pos - from);
    if (readFully(fd, block, from) !== block.length) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
    blocks.push(block);
    tailReadHooks.afterBlock?.(from);
    // A `\n` at offset p starts a line at p + 1; the file's last byte never does (a final `\n`
    // ends the last line). Scan this block from its end down.
    let i = Math.min(block.length, size - 1 - from) - 1;
    while (i >= 0) {
      const p = block.lastIndexOf(NL, i);
      if (p === -1) break;
      found++;
      start = from + p + 1;
      if (found === want) break scan;
      i = p - 1;
    }
    pos = from;
  }

  let earlier: boolean;
  let count = found;
  if (found === want) {
    earlier = true;
  } else if (size - textStart <= maxBytes) {
    // The scan reached the start of the text: the first line is returned too (if there is one).
    start = textStart;
    if (size > textStart) count++;
    earlier = false;
  } else if (found > 0) {
    earlier = true; // the byte cap stops before N lines; the lines found so far fit in it
  } else {
    throw fail("LINE_TOO_LARGE", t.alias, t.rel);
  }

  // `blocks` covers [pos, size) in reverse; cut at `start`.
  const held = Buffer.concat(blocks.reverse());
  const heldFrom = size - held.length;
  const bytes = held.subarray(start - heldFrom);
  let content: string;
  try {
    content = fatalUtf8.decode(bytes);
  } catch {
    throw fail("UNSUPPORTED_TEXT_ENCODING", t.alias, t.rel);
  }
  if (revisionOf(fs.fstatSync(fd, { bigint: true })) !== revision) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
  return {
    workdir: t.alias,
    path: t.rel,
    start_line: earlier ? null : 1,
    end_line: earlier ? null : count,
    content,
    bytes_returned: bytes.length,
    has_more: false,
    next_start_line: null,
    revision,
    lines_returned: count,
    has_earlier_lines: earlier,
  };
}
