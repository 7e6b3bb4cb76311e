// find_files on two threads (src/fs/search/find-units.ts): the search worker walks sub-trees the
// main thread hands it, and the answer must be the one the main thread alone gives, byte for
// byte, wherever the walk stops: at the limit, at max_walk_entries, inside a unit or between
// units, with ignore files at several levels, more than 20 ignore-file warnings, hidden, denied
// and excluded entries. A unit cap of a few entries splits this small tree as the 16,384-entry
// cap splits a big one. Each case also checks that the worker really walked units, so none of
// them can pass with the main thread walking alone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { FsLimits, Workdir } from "../../src/config/types.ts";
import { createFileService } from "../../src/fs/index.ts";
import { fsNative } from "../../platform/fs/native.ts";
import { FindUnits, setFindLockstep, setFindUnitCap } from "../../src/fs/search/find-units.ts";
import { searchPool, setSearchWorkerEnabled } from "../../src/fs/search/search-pool.ts";
import { ServerfsError } from "../../src/errors.ts";
import { registry, tempDir, unshareMounts, workdir, write } from "./helpers.ts";

const linuxWorker = process.platform === "linux";
let root = "";

/** A lopsided tree: one top directory holds most of it, as `src/` does in a repository. */
function buildTree(dir: string): void {
  write(dir, ".gitignore", "*.log\n/build/\n!keep.log\n");
  write(dir, "top.rs", "");
  write(dir, "top.log", "");
  write(dir, "keep.log", "");
  write(dir, "build/out.rs", "");
  write(dir, "secret.pem", "");
  write(dir, ".hidden/h.rs", "");
  for (let a = 0; a < 3; a++) write(dir, `small${a}/s.rs`, "");
  for (let a = 0; a < 12; a++) {
    for (let b = 0; b < 6; b++) {
      const d = `src/m${String(a).padStart(2, "0")}/p${b}`;
      for (let f = 0; f < 9; f++) write(dir, `${d}/f${f}.${f % 3 === 0 ? "rs" : f % 3 === 1 ? "log" : "txt"}`, "");
      if (b === 2) write(dir, `${d}/.gitignore`, "f1*\n!f4.log\nsub/\n");
      if (b >= 4) fs.mkdirSync(path.join(dir, d, ".gitignore"), { recursive: true }); // a warning each
      write(dir, `${d}/sub/x.rs`, "");
    }
  }
  write(dir, "zz/last.rs", "");
}

function service(over: Partial<Workdir> = {}, limits: Partial<FsLimits> = {}) {
  return createFileService(registry([workdir("w", root, over)], { max_search_results: 10_000, ...limits }));
}

type Args = { pattern: string; limit?: number; include_ignored?: boolean; exclude?: string[] };

async function answer(on: boolean, args: Args, over: Partial<Workdir>, limits: Partial<FsLimits>): Promise<unknown> {
  setSearchWorkerEnabled(on);
  const svc = service(over, limits);
  try {
    return await svc.findFiles({ workdir: "w", ...args });
  } catch (err) {
    if (err instanceof ServerfsError) return { error: err.code };
    throw err;
  } finally {
    setSearchWorkerEnabled(true);
  }
}

/**
 * The answer with the worker, checked against the answer without it: once as the threads race,
 * once in lockstep (the main thread waits for each unit it hands over), whose count of units the
 * worker walked is returned: it depends on the tree alone.
 */
async function same(args: Args, over: Partial<Workdir> = {}, limits: Partial<FsLimits> = {}): Promise<number> {
  const alone = await answer(false, args, over, limits);
  expect(await answer(true, args, over, limits)).toEqual(alone);
  expect(await searchPool()!.whenReady()).toBe(true); // a call only shares with a thread that is up
  const before = FindUnits.counts.done;
  expect(await inLockstep(() => answer(true, args, over, limits))).toEqual(alone);
  return FindUnits.counts.done - before;
}

/** Run `fn` with the main thread waiting for each unit it hands over (setFindLockstep). */
async function inLockstep<T>(fn: () => Promise<T>): Promise<T> {
  setFindLockstep(true);
  try {
    return await fn();
  } finally {
    setFindLockstep(false);
  }
}

/** A whole-tree call cancelled as soon as it has handed the worker its first units: its error code. */
async function cancelledAtFirstUnit(svc: ReturnType<typeof service>): Promise<string> {
  const ac = new AbortController();
  const walk = svc.findFiles({ workdir: "w", pattern: "*" }, ac.signal);
  ac.abort();
  return walk.then(
    () => "answered",
    (e: ServerfsError) => e.code,
  );
}

beforeAll(async () => {
  root = path.join(tempDir(), "root");
  buildTree(root);
  if (linuxWorker) expect(await searchPool()!.whenReady()).toBe(true);
  setFindUnitCap(7);
});

afterAll(() => setFindUnitCap());

describe.skipIf(!linuxWorker)("find_files with the search worker gives the main thread's answer", () => {
  test("whole walks: ignore files at three levels, negations, warnings past 20, hidden and denied", async () => {
    const whole = (await answer(true, { pattern: "*", limit: 10_000 }, {}, {})) as { matches: { path: string }[]; ignored: number; ignore_warnings: string[] };
    const paths = whole.matches.map((m) => m.path);
    for (const p of ["top.rs", "keep.log", "src/m00/p2/f4.log", "src/m11/p5/sub/x.rs", "zz/last.rs"]) expect(paths).toContain(p);
    for (const p of ["top.log", "build/out.rs", "secret.pem", ".hidden/h.rs", "src/m00/p2/f1.log", "src/m00/p2/sub/x.rs", "src/m00/p1/f1.log"]) expect(paths).not.toContain(p);
    expect(whole.ignore_warnings).toHaveLength(21); // 24 warnings: 20 texts and the "… and 4 more" line
    expect(whole.ignore_warnings[20]).toBe("… and 4 more ignore-file warnings");
    expect(await same({ pattern: "*.rs" })).toBeGreaterThan(3);
    expect(await same({ pattern: "*" })).toBeGreaterThan(3);
    expect(await same({ pattern: "*.log" })).toBeGreaterThan(3);
    expect(await same({ pattern: "*", include_ignored: true })).toBeGreaterThan(3);
    expect(await same({ pattern: "*.rs" }, { allow_hidden: true })).toBeGreaterThan(3);
    expect(await same({ pattern: "*.rs" }, { respect_ignore_files: false })).toBeGreaterThan(3);
    expect(await same({ pattern: "*", exclude: ["src/m03", "**/p5", "*.txt"] })).toBeGreaterThan(3);
  });

  test("every limit from 1 to past the last match stops where one thread stops", async () => {
    let units = 0;
    for (let limit = 1; limit <= 300; limit += limit < 20 ? 1 : 23) units += await same({ pattern: "*.rs", limit });
    expect(units).toBeGreaterThan(20);
  });

  test("every max_walk_entries stops where one thread stops, with its ignored count and warnings", async () => {
    let units = 0;
    for (let cap = 1; cap <= 1200; cap += cap < 30 ? 1 : 37) units += await same({ pattern: "*" }, {}, { max_walk_entries: cap });
    expect(units).toBeGreaterThan(20);
  });

  test("a sub-directory walk, and both stops at once", async () => {
    expect(await same({ pattern: "*.log", path: "src" } as Args)).toBeGreaterThan(0);
    for (const limit of [5, 50, 150]) for (const walk of [40, 400, 900]) await same({ pattern: "*", limit }, {}, { max_walk_entries: walk });
  });

  test("a worker that ends mid-walk: its units are walked on the main thread, with the same answer", async () => {
    const alone = await answer(false, { pattern: "*" }, {}, {});
    const pool = searchPool()!;
    expect(await pool.whenReady()).toBe(true);
    const dropped = FindUnits.counts.dropped;
    // in lockstep the walk's first unit is the worker's next piece of work, which ends the thread
    pool.crashNext();
    expect(await inLockstep(() => service().findFiles({ workdir: "w", pattern: "*" }))).toEqual(alone as never);
    expect(FindUnits.counts.dropped).toBeGreaterThan(dropped);
    await pool.kill(); // until the ended thread is gone: the next call starts a new one
    expect(await pool.whenReady()).toBe(true);
    expect(await same({ pattern: "*" })).toBeGreaterThan(3);
  });

  test("cross_mounts = false: the worker neither shows nor enters a mount point inside its unit", () => {
    const base = tempDir("serverfs-find-units-mounts-");
    const p = Bun.spawnSync([...unshareMounts(), process.execPath, path.join(import.meta.dir, "fixtures/find-units-mounts-child.ts"), base], { stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`mount child failed (${p.exitCode}): ${p.stderr.toString().slice(0, 2000)}`);
    const r = JSON.parse(p.stdout.toString().trim().split("\n").pop() as string) as Record<string, { paths: string[]; units: number }>;
    expect(r.confined).toEqual({ paths: ["a/x.txt", "b/y.txt", "b/n/q.txt"], units: 1 });
    expect(r["confined-alone"]).toEqual({ paths: r.confined!.paths, units: 0 });
    expect(r.crossing).toEqual({ paths: ["a/x.txt", "b/y.txt", "b/m/z.txt", "b/m/deep/w.txt", "b/n/q.txt"], units: 1 });
    expect(r["crossing-alone"]).toEqual({ paths: r.crossing!.paths, units: 0 });
  });

  test("a workspace on another backend than the platform's (a test's) walks alone: the worker would bypass it", async () => {
    const svc = createFileService(registry([workdir("w", root)], { max_search_results: 10_000 }), { native: { ...fsNative() } });
    const alone = await answer(false, { pattern: "*", limit: 10_000 }, {}, {});
    const before = FindUnits.counts.sent;
    expect(await inLockstep(() => svc.findFiles({ workdir: "w", pattern: "*", limit: 10_000 }))).toEqual(alone as never);
    expect(FindUnits.counts.sent).toBe(before);
  });

  test("cancelled while the worker holds a unit: SEARCH_FAILED, the unit is dropped, and no slot is kept", async () => {
    const pool = searchPool()!;
    expect(await pool.whenReady()).toBe(true);
    const svc = service();
    await inLockstep(async () => {
      // the worker sits on the first unit until the call's cancellation word is set
      pool.stallNext();
      const dropped = FindUnits.counts.dropped;
      expect(await cancelledAtFirstUnit(svc)).toBe("SEARCH_FAILED");
      expect(FindUnits.counts.dropped).toBeGreaterThan(dropped);
      // 40 more cancelled calls (more than the pool's 32 slots): had any kept its slot, the last
      // calls would get none and walk alone
      for (let i = 0; i < 40; i++) expect(await cancelledAtFirstUnit(svc)).toBe("SEARCH_FAILED");
    });
    expect(await same({ pattern: "*" })).toBeGreaterThan(3);
  });

  test("concurrent calls share the worker and each gets its own answer", async () => {
    const cases: Args[] = [{ pattern: "*.rs", limit: 10_000 }, { pattern: "*.log", limit: 7 }, { pattern: "*", limit: 10_000, exclude: ["src/m0*"] }];
    const alone = await Promise.all(cases.map((c) => answer(false, c, {}, {})));
    const svc = service();
    const before = FindUnits.counts.done;
    const got = await inLockstep(() => Promise.all([...cases.map((c) => svc.findFiles({ workdir: "w", ...c })), svc.searchText({ workdir: "w", query: "no such text" })]));
    expect(got.slice(0, cases.length)).toEqual(alone as never);
    expect(got[cases.length]).toMatchObject({ returned: 0 });
    expect(FindUnits.counts.done - before).toBeGreaterThan(3 * cases.length);
  });

  test("a worker that never gives its unit back is ended after the grace, and the call still answers", async () => {
    const pool = searchPool()!;
    expect(await pool.whenReady()).toBe(true);
    pool.hangNext();
    expect(await inLockstep(() => cancelledAtFirstUnit(service()))).toBe("SEARCH_FAILED");
    // the hung thread was ended; a new one serves the next call
    expect(await pool.whenReady()).toBe(true);
    expect(await same({ pattern: "*" })).toBeGreaterThan(3);
  });
});
