// search_text, in process (docs/tools.md, `search_text`). ripgrep's observable contract, kept on purpose:
// fixed-string matching (or RE2 regex mode, scan-regex.ts; context lines, scan-context.ts); files
// larger than search_max_file_bytes skipped; a file holding a NUL is cut at the start of the 64 KiB
// block containing the first NUL (earlier matches survive); lines
// split on \n with \r kept; an undecodable line never matches while other lines of the file still
// can; .git/.hg/.svn never searched; hidden/denied/reserved filtered on the FULL workdir-relative
// path; `glob` relative to the search root; early stop once limit+1 matches exist; the walk
// visits at most max_walk_entries entries (then truncated: true), each directory read keeping
// only as many of its smallest entries as that budget still allows; a wall-clock
// deadline, checked on every directory entry and inside large files, with the event loop given
// back every 25 ms. A match's text is capped at 2 KiB (UTF-8 safe) with text_truncated: true.
//
// Speed and memory: raw bytes are scanned (scan.ts) with Buffer.indexOf (memmem) in a reusable
// buffer; only candidate lines are decoded. Directories are re-opened from the root (kernel-
// checked); files are opened relative to the held directory descriptor with no follow.
//
// Two threads: this one walks (directory reads, policy, glob) and collects the files to scan into
// batches of up to BATCH_FILES names (search-batch.ts); a batch goes to the search worker
// (search-pool.ts) when it has room, else this thread scans it itself, handing the rest of it to
// the worker as soon as the worker runs dry, so both cores scan and neither waits. An earlier worker-pool variant paid ~1.8x the CPU time because it messaged per
// file; here a message carries a whole batch and its answer only the matches. Results are put
// back together in walk order by batch number, each batch stopping at limit+1 matches of its own,
// which gives exactly the matches and order of a single-threaded scan; the walk stops once the
// batches finished in order already hold limit+1. A directory descriptor stays open until every
// batch naming it has been answered. Only a platform with a worker opener has the worker (platform/fs/search-port.ts: Linux with openat2);
// elsewhere every batch is scanned here, with the same results.
//
// Ignore files and `exclude` (../walk-filter.ts) prune after the policy, on this thread, before a
// file joins a batch: an ignored or excluded directory is never opened.

import type { Target, Workspace } from "../context.ts";
import { fail } from "../fail.ts";
import { BUFFER_BYTES, type Scanner } from "./scan.ts";
import type { SearchMatch } from "./scan-types.ts";
import { makeScanner, scanBatch, type BatchGroup, type BatchParams, type BatchResult, type OpenChild, type ScanSpec } from "./search-batch.ts";
import type { SearchRequest } from "./request.ts";
import { activeSearchPool, WORKER_CANCEL_GRACE_MS, WorkerGone, type PoolSession } from "./search-pool.ts";
import { entryKind, openWalkDir, WalkClock, WalkDirRead } from "../walk.ts";
import { keepScanBelowFtl } from "./scan-tiers.ts";
import { keepWalkBelowFtl } from "./walk-tiers.ts";
import { refusesMountCrossing } from "../../../platform/fs/search-port.ts";
import type { IgnoreLevel, WalkIgnore } from "../ignore/index.ts";
import { walkIgnoreFor } from "../walk-filter.ts";

export type { SearchMatch } from "./scan-types.ts";

// before any search: see scan-tiers.ts
keepScanBelowFtl();
keepWalkBelowFtl();

export interface SearchOutput {
  matches: SearchMatch[];
  returned: number;
  truncated: boolean;
  /** Entries ignore files left out (0 with include_ignored or respect_ignore_files = false). */
  ignored: number;
  /** Ignore files that were cut, held too many patterns or could not be read. */
  ignore_warnings?: string[];
  /** Files skipped because they could not be read (an I/O error, no read permission). */
  unreadable: number;
}

const VCS_DIRS = new Set([".git", ".hg", ".svn"]);
/** Files per batch: few messages (their serialized bytes live outside the JS heap and cost RSS until collected); the hand-off keeps both threads busy to the end anyway. */
const BATCH_FILES = 256;
/** Directories per batch: each holds its descriptor open until the batch is answered. */
const BATCH_DIRS = 16;
/** Walk ticks (entries, scanner buffers) between young collections on this thread. */
const SEARCH_GC_TICKS = 8_192;
/**
 * How long a search's first batch waits for a worker that is still starting (it takes ~30 ms
 * after serve's start-up; see search-pool.ts) before this thread scans it: a batch scanned here
 * shares this thread with every other request, so it goes to the worker whenever there is one.
 */
const WORKER_START_WAIT_MS = 1000;

/**
 * Read buffers of finished searches, for the next ones: a search holds its 1 MiB buffer from start
 * to end, long enough to outlive young collections, so a fresh one per search piled up in the old
 * generation until a full collection (serve's peak RSS rose by several MB per search).
 */
const spareBuffers: Buffer[] = [];
const SPARE_BUFFERS = 2;

interface Dir {
  parts: string[];
  rel: string;
  sub: string;
  /** The ignore rules in force in this directory's parent. */
  level: IgnoreLevel | null;
}

/** A held directory descriptor: closed once the walk is done with it and no batch names it. */
interface DirRef {
  fd: number;
  refs: number;
}

interface Group extends BatchGroup {
  ref: DirRef;
}

/** Search below `t` with arguments checkSearchRequest (request.ts) has checked: nothing is checked here. */
export async function searchText(ws: Workspace, t: Target, req: SearchRequest, signal?: AbortSignal): Promise<SearchOutput> {
  const run = new SearchRun(ws, t, req, signal, walkIgnoreFor(ws, t, { includeIgnored: req.includeIgnored }));
  try {
    await run.walk();
    await run.finish();
  } finally {
    await run.settle();
    run.clock.finished();
  }
  return run.output();
}

class SearchRun {
  readonly clock: WalkClock;
  private readonly scanner: Scanner;
  private readonly buffer: Buffer;
  private readonly params: BatchParams;
  private readonly session: PoolSession | null;
  private readonly want: number;
  private capped = false;
  /** The batches finished in walk order hold `want` matches: nothing later can change the answer. */
  private stopped = false;
  private failure: Error | null = null;
  private waitedForWorker = false;
  private groups: Group[] = [];
  private files = 0;
  private seq = 0;
  private readonly results: (SearchMatch[] | undefined)[] = [];
  /** Per batch, the files it could not read. */
  private readonly unreadable: number[] = [];
  private prefixNext = 0;
  private prefixCount = 0;
  private readonly inflight = new Set<Promise<void>>();
  private readonly openChild: OpenChild;

  constructor(
    private readonly ws: Workspace,
    private readonly t: Target,
    private readonly req: SearchRequest,
    signal: AbortSignal | undefined,
    private readonly ignore: WalkIgnore | null,
  ) {
    const limits = ws.registry.limits;
    this.clock = new WalkClock(t, limits.search_timeout_seconds, signal, "search", 1, SEARCH_GC_TICKS);
    this.want = req.limit + 1;
    // refuse_hardlinked_reads: such files are skipped, like unreadable ones
    this.params = { maxFile: limits.search_max_file_bytes, refuseHardlinked: t.wd.workdir.refuse_hardlinked_reads, want: this.want };
    const spec: ScanSpec = { query: req.query, caseSensitive: req.caseSensitive, regex: req.regex !== null, contextLines: req.contextLines };
    this.buffer = spareBuffers.pop() ?? Buffer.allocUnsafe(BUFFER_BYTES);
    this.scanner = makeScanner(spec, this.buffer, req.regex);
    this.session = activeSearchPool()?.begin(spec, this.params) ?? null;
    const native = ws.native;
    this.openChild = native.openReadChild?.bind(native) ?? ((dirFd, name) => native.openBeneath(dirFd, [name], "read"));
  }

  async walk(): Promise<void> {
    const { ws, t, clock } = this;
    const globMatch = this.req.glob;
    const root = ws.rootFd(t);
    const policy = t.wd.policy;
    const { ignore } = this;
    const exclude = this.req.exclude;
    const stack: Dir[] = [{ parts: t.parts, rel: t.rel, sub: "", level: ignore === null ? null : ignore.start(t.parts).level }];
    let first = true;
    // Like find_files: every child seen counts toward max_walk_entries before any filtering.
    const maxWalk = ws.registry.limits.max_walk_entries;
    let walked = 0;
    // A search root inside a VCS directory is validated like any other, then holds nothing to search.
    const insideVcs = t.parts.some((p) => VCS_DIRS.has(p));

    // The search root itself must be a directory (validated before any walking).
    walk: while (stack.length > 0) {
      const dir = stack.pop() as Dir;
      const dirFd = openWalkDir(ws, t, root, dir, first);
      if (dirFd === null) continue;
      const isRoot = first;
      first = false;
      if (insideVcs) {
        ws.native.closeFast(dirFd);
        break;
      }
      const ref: DirRef = { fd: dirFd, refs: 1 };
      let level: IgnoreLevel | null = null;
      const noXdev = refusesMountCrossing(dirFd);
      const subdirs: Dir[] = [];
      try {
        const budget = maxWalk - walked + 1;
        const read = new WalkDirRead(ws, t, dirFd, budget, isRoot);
        while (!read.step()) if (clock.due()) await clock.pause();
        if (ignore !== null) level = ignore.enterRead(dir.level, dirFd, dir.rel, read.entries, budget);
        for (const e of read.entries) {
          if (clock.tick()) await clock.pause();
          if (++walked > maxWalk) {
            this.capped = true;
            break walk;
          }
          if (VCS_DIRS.has(e.name)) continue;
          if (!policy.entryVisible(dir.rel, e.name)) continue;
          const kind = entryKind(ws, dirFd, e);
          if (kind !== "directory" && kind !== "file") continue;
          if (ignore !== null && ignore.isIgnored(level, dir.rel, e.name, kind === "directory")) {
            ignore.ignored++;
            continue;
          }
          if (exclude !== null && exclude(dir.sub === "" ? e.name : `${dir.sub}/${e.name}`, e.name)) continue;
          if (kind === "directory") {
            const rel = dir.rel === "" ? e.name : `${dir.rel}/${e.name}`;
            subdirs.push({ parts: [...dir.parts, e.name], rel, sub: dir.sub === "" ? e.name : `${dir.sub}/${e.name}`, level });
            continue;
          }
          if (globMatch !== null && !globMatch(dir.sub === "" ? e.name : `${dir.sub}/${e.name}`, e.name)) continue;
          let g = this.groups[this.groups.length - 1];
          if (g === undefined || g.ref !== ref) {
            ref.refs++;
            g = { ref, dirFd, noXdev, prefix: dir.rel, names: [] };
            this.groups.push(g);
          }
          g.names.push(e.name);
          if (++this.files >= BATCH_FILES || this.groups.length > BATCH_DIRS) {
            await this.flush();
            if (this.stopped) break walk;
          }
        }
      } finally {
        this.release(ref);
      }
      for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as Dir);
    }
  }

  /** Scan what the walk left in the last batch, then wait for the worker's answers (under the deadline). */
  async finish(): Promise<void> {
    if (!this.stopped) await this.flush();
    while (this.inflight.size > 0 && !this.stopped) {
      await Promise.race([Promise.allSettled([...this.inflight]), new Promise((r) => setTimeout(r, 25))]);
      this.clock.due(); // SEARCH_TIMEOUT past the deadline
      await this.clock.pause(); // and a cancelled request ends here
      this.throwFailure();
    }
    this.throwFailure();
  }

  /** Whatever happened: stop the worker's part of this search, wait for it to give back every batch, close every descriptor. */
  async settle(): Promise<void> {
    for (const g of this.groups) this.release(g.ref);
    this.groups = [];
    // nothing scans on this thread any more: the buffer may serve the next search
    if (spareBuffers.length < SPARE_BUFFERS) spareBuffers.push(this.buffer);
    this.scanner.release();
    const session = this.session;
    if (session === null) return;
    if (this.inflight.size > 0) {
      session.cancel();
      const all = Promise.allSettled([...this.inflight]);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([all.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), WORKER_CANCEL_GRACE_MS)))]);
      clearTimeout(timer);
      if (late) {
        await session.kill();
        await all;
      }
    }
    session.end();
  }

  output(): SearchOutput {
    const matches: SearchMatch[] = [];
    // counted over the batches the answer is made of, so a batch the worker scanned past the
    // answer's end does not change it
    let unreadable = 0;
    for (let i = 0; i < this.seq && matches.length < this.want; i++) {
      const r = this.results[i];
      if (r === undefined) break; // only after the walk stopped with enough matches before it
      for (const m of r) matches.push(m);
      unreadable += this.unreadable[i] ?? 0;
    }
    if (matches.length > this.want) matches.length = this.want;
    const truncated = this.capped || matches.length > this.req.limit;
    const returned = truncated ? matches.slice(0, this.req.limit) : matches;
    const out: SearchOutput = { matches: returned, returned: returned.length, truncated, unreadable, ignored: this.ignore?.ignored ?? 0 };
    const warnings = this.ignore?.warnings() ?? [];
    if (warnings.length > 0) out.ignore_warnings = warnings;
    return out;
  }

  private release(ref: DirRef): void {
    if (--ref.refs === 0) this.ws.native.closeFast(ref.fd);
  }

  private async flush(): Promise<void> {
    if (this.files === 0) return;
    const groups = this.groups;
    this.groups = [];
    this.files = 0;
    const session = this.session;
    if (session !== null && !this.waitedForWorker) await this.waitForWorker(session);
    if (session !== null && session.canTake()) this.post(session, groups);
    else await this.scanHere(groups);
    this.throwFailure();
  }

  /** Once per search, before its first batch: let a starting worker come up (bounded, and the deadline still holds). */
  private async waitForWorker(session: PoolSession): Promise<void> {
    this.waitedForWorker = true;
    if (session.canTake()) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([session.whenReady(), new Promise((r) => (timer = setTimeout(r, WORKER_START_WAIT_MS)))]);
    clearTimeout(timer);
    this.clock.due();
    await this.clock.pause();
  }

  /** Hand a batch to the worker; its directories stay open until the answer (or the thread's end). */
  private post(session: PoolSession, groups: Group[]): void {
    const seq = this.seq++;
    const plain = groups.map((g) => ({ dirFd: g.dirFd, noXdev: g.noXdev, prefix: g.prefix, names: g.names }));
    const p: Promise<void> = session
      .post(seq, plain)
      .then(
        (r) => {
          if (r !== null) this.accept(seq, r);
        },
        (err: unknown) => {
          this.failure ??= err instanceof WorkerGone ? fail("SEARCH_FAILED", this.t.alias, this.t.rel, "the search worker stopped unexpectedly") : (err as Error);
        },
      )
      .finally(() => {
        for (const g of groups) this.release(g.ref);
        this.inflight.delete(p);
      });
    this.inflight.add(p);
  }

  /**
   * Scan a batch on this thread. While it runs the walk is paused, so if the worker runs out of
   * work meanwhile the rest of the batch goes to it (the next batch number: walk order holds).
   */
  private async scanHere(groups: Group[]): Promise<void> {
    const seq = this.seq++;
    const session = this.session;
    const native = this.ws.native;
    let rest: Group[] | undefined;
    try {
      const r = await scanBatch(groups, this.scanner, this.params, this.openChild, (fd) => native.closeFast(fd), this.clock, session === null ? undefined : () => session.canTake());
      this.accept(seq, r);
      rest = r.rest;
      if (rest !== undefined) for (const g of rest) g.ref.refs++;
    } finally {
      for (const g of groups) this.release(g.ref);
    }
    if (rest !== undefined && session !== null) {
      if (this.stopped) for (const g of rest) this.release(g.ref);
      else this.post(session, rest);
    }
  }

  private accept(seq: number, r: BatchResult): void {
    if (r.exhausted) this.failure ??= fail("RESOURCE_EXHAUSTED", this.t.alias, this.t.rel);
    this.results[seq] = r.matches;
    this.unreadable[seq] = r.unreadable;
    while (this.results[this.prefixNext] !== undefined) this.prefixCount += (this.results[this.prefixNext++] as SearchMatch[]).length;
    if (this.prefixCount >= this.want) this.stopped = true;
  }

  private throwFailure(): void {
    // once the answer is complete, a later batch's failure (the worker dying meanwhile) cannot change it
    if (this.failure !== null && !this.stopped) throw this.failure;
  }
}
