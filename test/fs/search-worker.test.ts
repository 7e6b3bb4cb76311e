// search_text's second thread (src/fs/search/search-pool.ts, search-worker.ts): on a real tree with
// binary, NUL, invalid-UTF-8, CRLF, long-line, multi-buffer and symlinked entries, the worker path
// gives exactly the matches, order and truncation of the main-thread-only path; a cancelled search
// stops the worker's batch and leaks no descriptor; a worker that dies mid-search is a coded
// SEARCH_FAILED, and the next search starts a fresh worker.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { linuxNative } from "../../platform/fs/resolve-linux.ts";
import { makeScanner, scanBatch, type BatchGroup } from "../../src/fs/search/search-batch.ts";
import { searchPool, setSearchWorkerEnabled } from "../../src/fs/search/search-pool.ts";
import { fromWire, toWire } from "../../src/fs/search/search-protocol.ts";
import { expectCode, registry, tempDir, workdir, write } from "./helpers.ts";

const linux = process.platform === "linux";

function seed(root: string, outside: string): void {
  write(outside, "secret.txt", "needle outside the workdir\n");
  for (let d = 0; d < 9; d++) {
    for (let f = 0; f < 70; f++) {
      const rel = `d${d}/${f % 3 === 0 ? `sub${f % 4}/` : ""}f${f}.${f % 2 === 0 ? "txt" : "md"}`;
      const k = (d * 70 + f) % 9;
      let body: Buffer;
      if (k === 0) body = Buffer.from(`plain ${f}\nneedle at ${d}/${f}\nNeedle upper\n`);
      else if (k === 1) body = Buffer.concat([Buffer.from("needle before nul\n"), Buffer.alloc(70_000, 0x61), Buffer.from("\n\0needle after nul\n")]);
      else if (k === 2) body = Buffer.concat([Buffer.from("needle ok\n"), Buffer.from([0xc3, 0x28]), Buffer.from(" needle bad line\nneedle again\n")]);
      else if (k === 3) body = Buffer.from(`crlf\r\nneedle crlf ${f}\r\n`);
      else if (k === 4) body = Buffer.from(`${"x".repeat(3000)} needle long\n`);
      else if (k === 5 && f < 18) body = Buffer.from(`${"filler line\n".repeat(90_000)}needle deep\n`); // > the 1 MiB scan buffer
      else if (k === 6) body = Buffer.from("ÄÖÜ nEEdle straße\n");
      else if (k === 7) body = Buffer.from([0x00, 0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65]);
      else body = Buffer.alloc(0);
      write(root, rel, body);
    }
  }
  // names that must cross to the worker unchanged (they travel NUL-joined)
  for (const n of [" lead space", "new\nline", "tab\tname", "émoji😀", "-dash", "back\\slash", "\u0001ctl", "x".repeat(255)]) write(root, `d2/odd/${n}`, `needle in ${JSON.stringify(n)}\n`);
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "d0", "link.txt"));
  fs.symlinkSync(outside, path.join(root, "d1", "linkdir"));
}

// generous ceilings for a loaded machine (not timing assertions)
setDefaultTimeout(60_000);

/**
 * This process's open descriptors on files and directories under `dir`: what a search opens. Not
 * the whole table, which the runtime's own threads change at any moment.
 */
function descriptorsUnder(dir: string): number {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd")) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target === dir || target.startsWith(`${dir}/`)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describe.skipIf(!linux)("search worker (Linux: openat2 below descriptors the main thread holds)", () => {
  let svc: FileService;
  let root: string;
  beforeAll(() => {
    const base = tempDir();
    root = path.join(base, "root");
    seed(root, path.join(base, "outside"));
    svc = createFileService(registry([workdir("w", root)], { max_search_results: 100_000 }));
  });
  afterAll(() => setSearchWorkerEnabled(true));

  const queries = [
    { query: "needle", limit: 100_000 },
    { query: "needle", limit: 37 },
    { query: "needle", limit: 1 },
    { query: "NEEDLE", caseSensitive: false, limit: 100_000 },
    { query: "straße", caseSensitive: false, limit: 50 },
    { query: "needle", glob: "**/sub*/*.txt", limit: 100_000 },
    { query: "no such text anywhere", limit: 10 },
    // regex mode and context lines go through the same batches: each thread builds its own matcher
    { query: "^ne+dle\\b", regex: true, limit: 100_000 },
    { query: "(?i)STRA(SS|ß)E|needle$", regex: true, limit: 60 },
    { query: "needle", contextLines: 2, limit: 100_000 },
    { query: "n[e]{2}dle", regex: true, contextLines: 1, limit: 25 },
  ];

  test("the worker path gives the main-thread path's matches, order and truncation exactly", async () => {
    const pool = searchPool();
    expect(pool).not.toBeNull();
    expect(await pool!.whenReady()).toBe(true);
    for (const q of queries) {
      setSearchWorkerEnabled(false);
      const alone = await svc.searchText({ workdir: "w", ...q });
      setSearchWorkerEnabled(true);
      const before = pool!.answered.done;
      const both = await svc.searchText({ workdir: "w", ...q });
      expect(both).toEqual(alone);
      // the worker really took part (the first batch always goes to a ready worker)
      if (q.limit > 1) expect(pool!.answered.done).toBeGreaterThan(before);
    }
    const all = await svc.searchText({ workdir: "w", query: "needle", limit: 100_000 });
    expect(all.matches.some((m) => m.text.includes("outside"))).toBe(false); // symlinks never followed
    expect(all.matches.some((m) => m.text === "needle after nul")).toBe(false);
    expect(all.matches.some((m) => m.text.includes("bad line"))).toBe(false);
    expect(all.matches.filter((m) => m.text === "needle deep").length).toBeGreaterThan(0);
  });

  test("a batch's groups cross to the worker and back unchanged, odd names included", () => {
    const names = [" lead space", "new\nline", "tab\tname", "émoji😀", "\uFFFD", "-dash", "back\\slash", "\u0001ctl", "x".repeat(255), "a"];
    const groups: BatchGroup[] = [
      { dirFd: 7, noXdev: true, prefix: "d/é", names },
      { dirFd: 8, noXdev: false, prefix: "", names: ["only"] },
      { dirFd: 9, noXdev: false, prefix: "e", names: [] },
    ];
    expect(groups.map(toWire).map(fromWire)).toEqual(groups);
  });

  test("a batch handed off part-way (to the worker) plus its rest gives the whole batch's matches in order", async () => {
    const rootFd = linuxNative.openRoot(root);
    const fds = ["d0", "d0/sub0", "d3"].map((d) => linuxNative.openBeneath(rootFd, d.split("/"), "dirList"));
    try {
      const groups: BatchGroup[] = fds.map((dirFd, i) => ({ dirFd, noXdev: false, prefix: ["d0", "d0/sub0", "d3"][i] as string, names: fs.readdirSync(path.join(root, ["d0", "d0/sub0", "d3"][i] as string)).sort() }));
      const pace = { tick: () => false, pause: async () => {} };
      const params = { maxFile: 50 * 1024 * 1024, refuseHardlinked: false, want: 100_000 };
      const open = (dirFd: number, name: string) => linuxNative.openBeneath(dirFd, [name], "read");
      const close = (fd: number) => linuxNative.closeFast(fd);
      const whole = await scanBatch(groups, makeScanner({ query: "needle", caseSensitive: true, regex: false, contextLines: 0 }), params, open, close, pace);
      expect(whole.matches.length).toBeGreaterThan(20);
      for (const after of [1, 7, 40]) {
        let asked = 0;
        const head = await scanBatch(groups, makeScanner({ query: "needle", caseSensitive: true, regex: false, contextLines: 0 }), params, open, close, pace, () => ++asked > after);
        expect(head.rest).toBeDefined();
        const tail = await scanBatch(head.rest as BatchGroup[], makeScanner({ query: "needle", caseSensitive: true, regex: false, contextLines: 0 }), params, open, close, pace);
        expect([...head.matches, ...tail.matches]).toEqual(whole.matches);
      }
    } finally {
      for (const fd of [...fds, rootFd]) linuxNative.closeFast(fd);
    }
  });

  /** Resolves once the worker holds one of this search's batches (the main thread is waiting for it). */
  async function workerBusy(): Promise<void> {
    const pool = searchPool()!;
    while (pool.inFlight() === 0) await new Promise((r) => setTimeout(r, 1));
  }

  test("a cancelled search stops the worker's batch and closes every descriptor", async () => {
    const pool = searchPool()!;
    expect(await pool.whenReady()).toBe(true);
    const fdsBefore = descriptorsUnder(root);
    const cancelledBefore = pool.answered.cancelled;
    pool.stallNext(); // its next batch stays busy (as with a huge file) until the search is cancelled
    const ctl = new AbortController();
    const p = svc.searchText({ workdir: "w", query: "needle", limit: 100_000 }, ctl.signal);
    await workerBusy();
    // the batch in the worker holds descriptors under the root: the count below can see a leak
    expect(descriptorsUnder(root)).toBeGreaterThan(fdsBefore);
    ctl.abort();
    await expectCode(p, "SEARCH_FAILED");
    // the stalled batch (and any queued behind it) came back as cancelled, none is left unanswered
    expect(pool.answered.cancelled).toBeGreaterThanOrEqual(cancelledBefore + 1);
    expect(pool.inFlight()).toBe(0);
    expect(descriptorsUnder(root)).toBe(fdsBefore);
    // the same worker answers the next search
    const done = pool.answered.done;
    expect((await svc.searchText({ workdir: "w", query: "needle", limit: 100_000 })).returned).toBeGreaterThan(0);
    expect(pool.answered.done).toBeGreaterThan(done);
  });

  test("the deadline ends a search whose batch is still in the worker (SEARCH_TIMEOUT), and the worker gives it back", async () => {
    const timed = createFileService(registry([workdir("w", root)], { max_search_results: 100_000, search_timeout_seconds: 1 }));
    expect((await timed.searchText({ workdir: "w", query: "needle", limit: 1 })).returned).toBe(1); // opens its root descriptor
    const pool = searchPool()!;
    expect(await pool.whenReady()).toBe(true);
    const fdsBefore = descriptorsUnder(root);
    const cancelledBefore = pool.answered.cancelled;
    pool.stallNext();
    await expectCode(timed.searchText({ workdir: "w", query: "needle", limit: 100_000 }), "SEARCH_TIMEOUT");
    expect(pool.answered.cancelled).toBeGreaterThanOrEqual(cancelledBefore + 1);
    expect(pool.inFlight()).toBe(0);
    expect(descriptorsUnder(root)).toBe(fdsBefore);
  });

  test("a worker that dies mid-search is SEARCH_FAILED, not a hang; the next worker gives the same answer", async () => {
    const pool = searchPool()!;
    expect(await pool.whenReady()).toBe(true);
    setSearchWorkerEnabled(false);
    const expected = await svc.searchText({ workdir: "w", query: "needle", limit: 100_000 });
    setSearchWorkerEnabled(true);
    const fdsBefore = descriptorsUnder(root);
    pool.crashNext();
    const err = await expectCode(svc.searchText({ workdir: "w", query: "needle", limit: 100_000 }), "SEARCH_FAILED");
    expect(err.message).toContain("search worker");
    expect(pool.inFlight()).toBe(0);
    expect(await pool.whenReady()).toBe(true); // a fresh thread
    // (counted with a live worker on both sides: a thread holds descriptors of its own)
    expect(descriptorsUnder(root)).toBe(fdsBefore);
    const done = pool.answered.done;
    expect(await svc.searchText({ workdir: "w", query: "needle", limit: 100_000 })).toEqual(expected);
    expect(pool.answered.done).toBeGreaterThan(done);
  });
});
