// One batch of search_text's files, scanned the same way on the main thread and in the search
// worker: each file is opened relative to a directory descriptor the main thread opened and
// verified (never by a path from the root), with no symlink followed, then scanned; it is fstat'ed
// first only where its link count matters (refuse_hardlinked_reads), else only when its first read
// leaves its size or its type in question (Scanner.scanUnstatted).
// The batch is the unit of work handed to the worker, so messaging costs per batch, not per file.

import { scanIo, type OpenFileFacts } from "../../../platform/fs/scan-io.ts";
import { errnoCode, ServerfsError } from "../../errors.ts";
import { Scanner } from "./scan.ts";
import type { FileMatch, Pace, SearchMatch } from "./scan-types.ts";
import { ContextLines } from "./scan-context.ts";
import { compileLineRegex, type RegexLines } from "./scan-regex.ts";

/** Files of one directory in a batch; `prefix` is the directory's workdir-relative path ("" at the root). */
export interface BatchGroup {
  dirFd: number;
  /** Open with RESOLVE_NO_XDEV (the directory is in a cross_mounts = false workdir). */
  noXdev: boolean;
  prefix: string;
  names: string[];
}

/**
 * What a scanner is built from, as plain data: it crosses to the worker in every batch message
 * (structured clone), and each thread builds its own scanner from it with makeScanner(). A new
 * kind of matcher adds its fields here and its case to makeScanner(); nothing else in the walk,
 * the batching or the worker changes.
 */
export interface ScanSpec {
  query: string;
  caseSensitive: boolean;
  /** `query` is an RE2 pattern, already validated by searchText (each thread compiles its own). */
  regex: boolean;
  /** context_lines: 0 for none. */
  contextLines: number;
}

/**
 * The scanner for a spec. `buf` is the read buffer to use (the worker shares one among all its
 * scanners); the scanner must give, for one file, its matches in file order, and with a smaller
 * `want` a prefix of the same list: batches and the walk-order merge rely on that. `compiled` is
 * the spec's regex when this thread already compiled it (searchText validates by compiling).
 */
export function makeScanner(spec: ScanSpec, buf?: Buffer, compiled?: RegexLines | null): Scanner {
  const regex = compiled ?? (spec.regex ? compileLineRegex(spec.query, spec.caseSensitive) : null);
  if (typeof regex === "string") throw new Error(`search pattern refused after validation: ${regex}`);
  const context = spec.contextLines > 0 ? new ContextLines(spec.contextLines) : null;
  return new Scanner(spec.query, spec.caseSensitive, regex, context, buf);
}

/** What every batch of one search shares. `want` is limit + 1: no batch needs more matches than that. */
export interface BatchParams {
  maxFile: number;
  refuseHardlinked: boolean;
  want: number;
}

export interface BatchResult<G extends BatchGroup = BatchGroup> {
  matches: SearchMatch[];
  /** A file could not be opened for lack of descriptors: the search fails with RESOURCE_EXHAUSTED. */
  exhausted: boolean;
  /** Files skipped because they could not be read (an I/O error, no read permission). */
  unreadable: number;
  /** The files not scanned because handOff() asked for them (they follow this batch in walk order). */
  rest?: G[];
}

/** Filled by scanIo.facts for the files that are fstat'ed; batches run one at a time per thread. */
const facts: OpenFileFacts = { regular: false, size: 0, nlink: 0 };

/** A handed-off remainder is worth a message only from this many files on. */
const MIN_HANDOFF = 4;

/**
 * Open failures that mean "not a file to search here" rather than "could not be read": it vanished,
 * is (or passes through) a symlink, a mount point of a confined workdir, or a special file.
 */
const NOT_SEARCHABLE = new Set(["ENOENT", "ENOTDIR", "ELOOP", "EXDEV", "ENXIO", "EISDIR"]);

/** Opens `name` below the held `dirFd` for reading, confined (kernel-checked), no symlink followed. */
export type OpenChild = (dirFd: number, name: string, noXdev: boolean) => number;

/**
 * Scan a batch in order. A file's matches are taken whole and the batch ends once it holds
 * `want` (later files could not make the answer), so concatenating batch results in walk order
 * and cutting at `want` gives exactly what one sequential scan gives. `pace.tick()` runs before
 * every file (and the scanner calls it after every buffer), so a deadline or a cancel stops a
 * batch of large files promptly.
 */
export async function scanBatch<G extends BatchGroup>(
  groups: G[],
  scanner: Scanner,
  p: BatchParams,
  open: OpenChild,
  close: (fd: number) => void,
  pace: Pace,
  handOff?: () => boolean,
): Promise<BatchResult<G>> {
  const matches: SearchMatch[] = [];
  let unreadable = 0;
  let left = 0;
  for (const g of groups) left += g.names.length;
  for (let gi = 0; gi < groups.length; gi++) {
    const g = groups[gi] as G;
    for (let ni = 0; ni < g.names.length; ni++, left--) {
      // the main thread gives the rest of its batch away as soon as the worker has room
      if (handOff !== undefined && left >= MIN_HANDOFF && ni + gi > 0 && handOff()) {
        return { matches, exhausted: false, unreadable, rest: [{ ...g, names: g.names.slice(ni) }, ...groups.slice(gi + 1)] };
      }
      const name = g.names[ni] as string;
      if (pace.tick()) await pace.pause();
      let fd: number;
      try {
        fd = open(g.dirFd, name, g.noXdev);
      } catch (err) {
        const code = errnoCode(err);
        if (code === "EMFILE" || code === "ENFILE") return { matches, exhausted: true, unreadable };
        // vanished, became a symlink, a mount point: not searchable; anything else could not be read
        if (code === undefined || !NOT_SEARCHABLE.has(code)) unreadable++;
        continue;
      }
      try {
        // the path is built only for a file that matched: most files of a big search do not
        let scanned: FileMatch[] | Promise<FileMatch[]>;
        if (p.refuseHardlinked) {
          // the link count is only known from an fstat, and must be known before any byte is read
          scanIo.facts(fd, facts);
          if (!facts.regular || facts.size > p.maxFile || facts.nlink > 1) continue;
          scanned = scanner.scanFile(fd, facts.size, "", p.want - matches.length, pace);
        } else scanned = scanner.scanUnstatted(fd, p.maxFile, "", p.want - matches.length, pace, facts);
        const found = Array.isArray(scanned) ? scanned : await scanned;
        if (found.length > 0) {
          const path = g.prefix === "" ? name : `${g.prefix}/${name}`;
          for (const m of found) {
            const { lineEndAbs: _drop, ...match } = m;
            match.path = path;
            matches.push(match);
          }
        }
      } catch (err) {
        if (err instanceof ServerfsError || err instanceof BatchCancelled) throw err;
        // a read error (EIO in the middle of a file) skips that file, counted; the search goes on
        unreadable++;
        continue;
      } finally {
        close(fd);
      }
      if (matches.length >= p.want) return { matches, exhausted: false, unreadable };
    }
  }
  return { matches, exhausted: false, unreadable };
}

/** Thrown by the worker's Pace once the main thread cancelled the search (deadline, cancel, enough matches). */
export class BatchCancelled extends Error {}
