// read_multiple_files: the first page of each of several text files of one workdir, in request
// order, each with its own result or its own coded error (docs/tools.md, `read_multiple_files`).
// The whole call shares ONE byte budget, the workdir's max_read_bytes, so a call costs no more
// memory or answer size than one read_text_file page however many paths it names.

import { ServerfsError } from "../errors.ts";
import type { Target, Workspace } from "./context.ts";
import { fail, faultFailure } from "./fail.ts";
import { readTextFile, type ReadTextOutput } from "./read.ts";

export interface ReadManyEntry {
  /** The path exactly as the caller sent it (the result's own `path` is the normalised one). */
  path: string;
  result: ReadTextOutput | null;
  error: { code: string; message: string } | null;
}

export interface ReadManyOutput {
  workdir: string;
  files: ReadManyEntry[];
  /** Entries with a result. */
  returned: number;
  /** Content bytes of every result together; never more than budget_bytes. */
  bytes_returned: number;
  budget_bytes: number;
}

/**
 * `prepare` turns one caller path into a Target (throwing its coded path error). Paths are
 * handled one after the other: each file is opened, read and closed before the next, so at most
 * one descriptor is held.
 */
export async function readMultipleFiles(
  ws: Workspace,
  alias: string,
  paths: readonly string[],
  prepare: (p: string) => Target,
  maxLines: (t: Target) => number,
  signal?: AbortSignal,
): Promise<ReadManyOutput> {
  const budget = ws.lookup(alias).workdir.max_read_bytes;
  let left = budget;
  let exhausted = false;
  const seen = new Map<string, number>();
  const files: ReadManyEntry[] = [];
  for (const [index, raw] of paths.entries()) {
    if (signal?.aborted) throw fail("READ_FAILED", alias, "", "read was cancelled");
    files.push(await one(raw, index));
  }
  const results = files.filter((f) => f.result !== null);
  return {
    workdir: alias,
    files,
    returned: results.length,
    bytes_returned: results.reduce((n, f) => n + f.result!.bytes_returned, 0),
    budget_bytes: budget,
  };

  async function one(raw: string, index: number): Promise<ReadManyEntry> {
    try {
      const t = prepare(raw);
      const first = seen.get(t.rel);
      if (first !== undefined) throw fail("DUPLICATE_PATH", alias, raw, `the same path as paths[${first}]; it is answered there`);
      seen.set(t.rel, index);
      if (exhausted || left === 0) throw fail("READ_BUDGET_EXCEEDED", alias, raw);
      let result: ReadTextOutput;
      try {
        result = await readTextFile(ws, t, 1, maxLines(t), signal, left);
      } catch (err) {
        // A first line that does not fit what is left of the budget: this file and every later
        // one are out of budget (a later, smaller file is not read instead: the cut is a prefix).
        if (err instanceof ServerfsError && err.code === "LINE_TOO_LARGE" && left < budget) {
          exhausted = true;
          throw fail("READ_BUDGET_EXCEEDED", alias, raw);
        }
        throw err;
      }
      left -= result.bytes_returned;
      return { path: raw, result, error: null };
    } catch (err) {
      // One file's unexpected I/O failure is that file's answer, not the call's; its own message
      // may hold a host path and is dropped.
      const coded = err instanceof ServerfsError ? err : (faultFailure(err, alias, raw, false) ?? fail("READ_FAILED", alias, raw, "the file could not be read"));
      return { path: raw, result: null, error: { code: coded.code, message: coded.message } };
    }
  }
}
