// read_text_file and the text resource: one page of lines from a held descriptor. Only the
// returned page is decoded; the revision is taken before and re-checked after reading.
// LINE_TOO_LARGE is raised only for a line that would be returned (docs/tools.md, `read_text_file`): an oversized
// line after a non-empty page simply ends the page with has_more=true.

import fs from "node:fs";
import { ServerfsError } from "../errors.ts";
import { closeQuietly, type Target, type Workspace } from "./context.ts";
import { fail, faultFailure } from "./fail.ts";
import { openRegularForRead } from "./open.ts";
import { revisionOf } from "./revision.ts";

export interface ReadTextOutput {
  workdir: string;
  path: string;
  start_line: number;
  end_line: number;
  content: string;
  bytes_returned: number;
  has_more: boolean;
  next_start_line: number | null;
  revision: string;
}

const CHUNK = 64 * 1024;

/** Test seam: called after each chunk is read, so a test can make a real writer act mid-read. Null outside tests. */
export const readTextHooks: { afterChunk: ((bytesRead: number) => void) | null } = { afterChunk: null };
export const SNIFF = 1024;
export const BOM = [0xef, 0xbb, 0xbf] as const;
export const fatalUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export async function readTextFile(
  ws: Workspace,
  t: Target,
  startLine: number,
  maxLines: number,
  signal?: AbortSignal,
  maxBytes: number = t.wd.workdir.max_read_bytes,
): Promise<ReadTextOutput> {
  return readHeld(ws, t, (fd, revision) => readPage(t, fd, revision, startLine, maxLines, maxBytes, signal));
}

/**
 * Open `t` as a regular file for reading, run `fn` on the held descriptor and its revision, and
 * close it. Every text read (page, tail) goes through here, so each maps a content verdict on a
 * file that changed meanwhile the same way.
 */
export async function readHeld<T>(ws: Workspace, t: Target, fn: (fd: number, revision: string, size: number) => Promise<T>): Promise<T> {
  const opened = openRegularForRead(ws, t, "read");
  const fd = opened.fd;
  try {
    const revision = revisionOf(opened.st);
    try {
      return await fn(fd, revision, Number(opened.st.size));
    } catch (err) {
      // A file written while it is read can look binary, undecodable or too long for a moment;
      // the caller's answer is that it changed, not a verdict on content it never really had.
      if (err instanceof ServerfsError && CONTENT_VERDICTS.has(err.code) && revisionOf(fs.fstatSync(fd, { bigint: true })) !== revision) {
        throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
      }
      throw err;
    }
  } finally {
    closeQuietly(fd);
  }
}

/**
 * Reaching a high start_line means scanning every byte before it, which for a large log can take
 * seconds: the scan gives the event loop back this often, so other requests keep being answered,
 * and stops when the request is cancelled.
 */
export const YIELD_EVERY_MS = 25;

const CONTENT_VERDICTS = new Set<string>(["LINE_TOO_LARGE", "BINARY_FILE", "UNSUPPORTED_TEXT_ENCODING"]);

async function readPage(
  t: Target,
  fd: number,
  revision: string,
  startLine: number,
  maxLines: number,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<ReadTextOutput> {
  const page: Buffer[] = [];
  let pageBytes = 0;
  let pageLines = 0;
  let cur: Buffer[] = [];
  let curLen = 0;
  let lineNo = 1; // line currently being scanned
  let position = 0;
  let first = true;
  let hasMore = false;
  let done = false;
  let lastYield = performance.now();
  // A chunk is reused until part of it is kept for the page: skipping lines allocates nothing.
  let buf = Buffer.allocUnsafe(CHUNK);
  let bufKept = false;

  // Returns true when the page is complete.
  const finishLine = (): boolean => {
    if (pageBytes + curLen > maxBytes) {
      if (pageLines === 0) throw fail("LINE_TOO_LARGE", t.alias, t.rel);
      hasMore = true;
      return true;
    }
    page.push(...cur);
    pageBytes += curLen;
    pageLines++;
    cur = [];
    curLen = 0;
    return false;
  };

  while (!done) {
    if (performance.now() - lastYield > YIELD_EVERY_MS) {
      await new Promise<void>((r) => setImmediate(r));
      lastYield = performance.now();
      if (signal?.aborted) throw fail("READ_FAILED", t.alias, t.rel, "read was cancelled");
    }
    if (bufKept) {
      buf = Buffer.allocUnsafe(CHUNK);
      bufKept = false;
    }
    let n = fs.readSync(fd, buf, 0, CHUNK, position);
    if (first && n > 0 && n < SNIFF) {
      // a short first read must not hide a NUL inside the sniff window
      n += fs.readSync(fd, buf, n, SNIFF - n, position + n);
    }
    position += n;
    readTextHooks.afterChunk?.(position);
    let chunk = buf.subarray(0, n);
    if (first) {
      first = false;
      if (chunk.subarray(0, SNIFF).indexOf(0) !== -1) throw fail("BINARY_FILE", t.alias, t.rel);
      if (chunk.length >= 3 && chunk[0] === BOM[0] && chunk[1] === BOM[1] && chunk[2] === BOM[2]) chunk = chunk.subarray(3);
    }
    if (n === 0) {
      // EOF: a final line without a newline is still a line.
      if (lineNo >= startLine && curLen > 0 && !finishLine()) lineNo++;
      break;
    }
    let i = 0;
    while (i < chunk.length) {
      const nl = chunk.indexOf(10, i);
      const end = nl === -1 ? chunk.length : nl + 1;
      if (lineNo < startLine) {
        if (nl === -1) {
          curLen += end - i; // only tracks "a partial line exists" for EOF accounting
          break;
        }
        curLen = 0;
        lineNo++;
        i = end;
        continue;
      }
      if (pageLines === maxLines) {
        // the page is full; any further byte means another line exists
        hasMore = true;
        done = true;
        break;
      }
      cur.push(chunk.subarray(i, end));
      bufKept = true;
      curLen += end - i;
      if (curLen > maxBytes && pageLines === 0) throw fail("LINE_TOO_LARGE", t.alias, t.rel);
      if (curLen + pageBytes > maxBytes && pageLines > 0) {
        hasMore = true;
        done = true;
        break;
      }
      if (nl === -1) break;
      if (finishLine()) {
        done = true;
        break;
      }
      lineNo++;
      i = end;
    }
  }

  let content: string;
  try {
    content = fatalUtf8.decode(Buffer.concat(page, pageBytes));
  } catch {
    throw fail("UNSUPPORTED_TEXT_ENCODING", t.alias, t.rel);
  }
  const after = fs.fstatSync(fd, { bigint: true });
  if (revisionOf(after) !== revision) throw fail("FILE_CHANGED_DURING_READ", t.alias, t.rel);
  const endLine = startLine + pageLines - 1;
  return {
    workdir: t.alias,
    path: t.rel,
    start_line: startLine,
    end_line: endLine,
    content,
    bytes_returned: pageBytes,
    has_more: hasMore,
    next_start_line: hasMore ? endLine + 1 : null,
    revision,
  };
}

/** serverfs://{workdir}/{path}: the whole file as one page, or RESOURCE_TOO_LARGE. */
export async function readResource(ws: Workspace, t: Target): Promise<{ text: string; mime_type: "text/plain" }> {
  let out: ReadTextOutput;
  try {
    out = await readTextFile(ws, t, 1, t.wd.workdir.max_read_lines);
  } catch (err) {
    if (err instanceof ServerfsError) throw err;
    throw faultFailure(err, t.alias, t.rel, false) ?? fail("READ_FAILED", t.alias, t.rel, "the resource could not be read");
  }
  if (out.has_more) throw fail("RESOURCE_TOO_LARGE", t.alias, t.rel);
  return { text: out.content, mime_type: "text/plain" };
}
