// Ignore files on a JavaScript-shaped project: a git repository with 3,000 source files and a
// .gitignored node_modules of 60,000 files. In one run, through MCP on the COMPILED
// `serverfs serve` (one long-lived session, warm page cache), interleaved run by run with a
// fresh ripgrep each time:
//   search_text (a query that matches nothing, so both read every file they keep)  vs `rg -F`
//   find_files (a pattern that matches nothing, so the walk is whole)              vs `rg --files`
//   both again with include_ignored: true                                          vs `rg --no-ignore`
//   both on the same tree without node_modules at all (a second serve), for the cost of the
//   ignored directory itself: the target is at most 1.1x
// It prints the medians, the ratios, the ignored counts, CPU per call, and the machine.
//
// IGNORE_PHASES=first (or first,warm): the FIRST search_text call of a freshly started serve on
//   the repository (ignore files on), against `rg -F` with its defaults, interleaved run by run,
//   one new serve per run, and the same first call in another new serve sent only once its full
//   server answered a ping and SETTLE_MS passed (bench/lib/serve-session.ts), so that the wait
//   for the server's load and the first search's own cost are told apart; `warm` (the default)
//   is the long-lived comparison above.
// IGNORE_TREES=<dir>: keep the two repositories in <dir> (repo/, bare/) and reuse them when a
//   previous run finished making them; they are left in place.
// Last line: RESULT {"bench":"ignore","runs","first_call":{ours_ms,baseline_ms,ratio}|null,
//   "settled_call":{...}|null,
//   "warm":{search,find,search_all,find_all,search_vs_bare,find_vs_bare: {...}}|null,
//   "ignored":{search,find}|null,"peak_rss_kib"} (medians; the highest VmHWM of every serve it
//   ran), for bench/targets.ts.
//
// usage: bun build/compile.ts linux-x64 && [IGNORE_PHASES=first,warm] [IGNORE_TREES=dir] bun bench/fs/ignore.ts [runs]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { machineLine, median } from "../lib/machine.ts";
import { figure, printResult, type Figure } from "../lib/result.ts";
import { cpuNs, openServe, settle, SETTLE_MS, spawnCpuMs, vmHwmKiB, writeServeConfig, type ServeSession } from "../lib/serve-session.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const BIN = process.env.SERVERFS_BIN ?? path.join(ROOT, "dist/serverfs-linux-x64");
const QUERY = "zq-no-such-token-7781";
const SOURCE_FILES = 3_000;
const MODULE_FILES = 60_000;
const PHASES = (process.env.IGNORE_PHASES ?? "warm").split(",");
if (PHASES.some((p) => p !== "first" && p !== "warm")) throw new Error(`IGNORE_PHASES: expected first and/or warm, got ${process.env.IGNORE_PHASES}`);

function line(i: number): string {
  return `export function f${i}(a: number, b: number): number { return a * ${i} + b; } // source line\n`;
}

/**
 * src/ with SOURCE_FILES files in 10-file directories, node_modules/ with MODULE_FILES in 100-file
 * packages (left out with `modules: false`: the same tree without them).
 */
function generate(root: string, modules = true): void {
  fs.mkdirSync(root, { recursive: true });
  fs.writeFileSync(path.join(root, ".gitignore"), "node_modules/\n*.log\ndist/\n");
  fs.writeFileSync(path.join(root, "package.json"), '{"name":"bench"}\n');
  const body = Array.from({ length: 30 }, (_, i) => line(i)).join("");
  for (let i = 0; i < SOURCE_FILES; i++) {
    const dir = path.join(root, "src", `m${Math.floor(i / 100)}`, `d${Math.floor(i / 10) % 10}`);
    if (i % 10 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.ts`), body);
  }
  const small = Array.from({ length: 8 }, (_, i) => line(i)).join("");
  for (let i = 0; i < (modules ? MODULE_FILES : 0); i++) {
    const dir = path.join(root, "node_modules", `pkg${Math.floor(i / 100)}`, i % 2 === 0 ? "lib" : "dist");
    if (i % 100 < 2) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `m${i}.js`), small);
  }
  const git = Bun.spawnSync(["git", "init", "-q"], { cwd: root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, GIT_CONFIG_NOSYSTEM: "1" } });
  if (git.exitCode !== 0) throw new Error("git init failed");
}

/** `generate` into `root`, unless a previous run finished it there (its `.complete` marker); true when reused. */
function ensure(root: string, modules = true): boolean {
  const marker = `${root}.complete`;
  if (fs.existsSync(marker)) return true;
  fs.rmSync(root, { recursive: true, force: true });
  generate(root, modules);
  fs.writeFileSync(marker, "");
  return false;
}

interface Series {
  ms: number[];
  cpu: number[];
}
const series = (): Series => ({ ms: [], cpu: [] });

async function ours(s: ServeSession, tool: string, args: Record<string, unknown>, into: Series, workdir = "bench"): Promise<{ ignored: number }> {
  const c0 = cpuNs(s.pid);
  const t0 = performance.now();
  const r = await s.call(tool, { workdir, limit: 100, ...args });
  into.ms.push(performance.now() - t0);
  into.cpu.push((cpuNs(s.pid) - c0) / 1e6);
  const out = r.structuredContent as { returned: number; truncated: boolean; ignored: number } | undefined;
  if (r.isError || out === undefined || out.returned !== 0 || out.truncated) throw new Error(`${tool}: ${JSON.stringify(r.structuredContent)}`);
  return out;
}

function rgRun(rg: string, root: string, args: string[], okExit: number, into: Series): void {
  const t0 = performance.now();
  const r = Bun.spawnSync([rg, "--no-messages", ...args], { cwd: root, stdout: "ignore" });
  into.ms.push(performance.now() - t0);
  into.cpu.push(spawnCpuMs(r));
  if (r.exitCode !== okExit) throw new Error(`rg ${args.join(" ")} exited ${r.exitCode}`);
}

function fmt(xs: number[]): string {
  return `median ${median(xs).toFixed(0)} ms [${xs.map((x) => x.toFixed(0)).join(", ")}]`;
}

const fmtRatio = (a: Series, b: Series): string => `${(median(a.ms) / median(b.ms)).toFixed(2)}x`;

function row(label: string, a: Series, b: Series, rgLabel: string): void {
  console.log(`${label}: ${fmt(a.ms)}; ${rgLabel}: ${fmt(b.ms)}; ratio ${fmtRatio(a, b)}; CPU ${median(a.cpu).toFixed(0)} ms vs ${median(b.cpu).toFixed(0)} ms (${(median(a.cpu) / median(b.cpu)).toFixed(2)}x)`);
}

const fig = (a: Series, b: Series): Figure => figure(median(a.ms), median(b.ms));

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  const rg = Bun.which("rg");
  if (rg === null) throw new Error("ripgrep (rg) not installed: apt-get install -y ripgrep");
  if (Bun.which("git") === null) throw new Error("git not installed: apt-get install -y git");
  const runs = Number(process.argv[2] ?? 5);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-ignore-"));
  const trees = process.env.IGNORE_TREES ?? base;
  fs.mkdirSync(trees, { recursive: true });
  const root = path.join(trees, "repo");
  const t0 = performance.now();
  const made = ensure(root) ? `reused from ${root}` : `made in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  console.log(machineLine());
  console.log(`tree: git repository, ${SOURCE_FILES} source files, ${MODULE_FILES} files in a .gitignored node_modules (${made}); binary ${path.relative(ROOT, BIN)}`);
  console.log(Bun.spawnSync([rg, "--version"]).stdout.toString().split("\n")[0]);
  const toml = writeServeConfig(base, "bench", root, { search_timeout_seconds: 300 });
  const peak = { kib: 0 };
  const first = PHASES.includes("first") ? await firstCall(rg, root, toml, base, runs, peak) : null;
  const warm = PHASES.includes("warm") ? await longLived(rg, root, toml, base, trees, runs, peak) : null;
  printResult({
    bench: "ignore",
    runs,
    first_call: first?.first ?? null,
    settled_call: first?.settled ?? null,
    warm: warm?.figures ?? null,
    ignored: warm?.ignored ?? null,
    peak_rss_kib: peak.kib,
  });
  fs.rmSync(base, { recursive: true, force: true });
}

/** The first search_text call of a new serve, and of a settled new serve, one serve each per run, against a fresh `rg -F`. */
async function firstCall(rg: string, root: string, toml: string, base: string, runs: number, peak: { kib: number }): Promise<{ first: Figure; settled: Figure }> {
  const ourFirst = series();
  const rgFirst = series();
  const ourSettled = series();
  const rgSettled = series();
  rgRun(rg, root, ["--no-ignore", "-F", QUERY], 1, series()); // warm the page cache and the dentry cache
  for (let i = 0; i < runs; i++) {
    rgRun(rg, root, ["-F", QUERY], 1, rgFirst);
    const s = await openServe(BIN, toml, base, "ignore-bench-first");
    await ours(s, "search_text", { query: QUERY }, ourFirst);
    peak.kib = Math.max(peak.kib, vmHwmKiB(s.pid));
    await s.close();
    rgRun(rg, root, ["-F", QUERY], 1, rgSettled);
    const t = await openServe(BIN, toml, base, "ignore-bench-settled");
    await settle(t);
    await ours(t, "search_text", { query: QUERY }, ourSettled);
    peak.kib = Math.max(peak.kib, vmHwmKiB(t.pid));
    await t.close();
  }
  console.log(`runs: ${runs}, interleaved; a new serve per run, its FIRST call; rg spawned fresh each time`);
  row("search_text, FIRST call of a fresh serve (ignore files on)", ourFirst, rgFirst, "rg -F");
  row(`search_text, FIRST call of a fresh serve whose server is up (a ping answered, then ${SETTLE_MS} ms)`, ourSettled, rgSettled, "rg -F");
  const [f, s] = [median(ourFirst.ms), median(ourSettled.ms)];
  console.log(`where the first call's time goes: ${f.toFixed(0)} ms = waiting for the server's load ${(f - s).toFixed(0)} ms + the settled first search ${s.toFixed(0)} ms`);
  return { first: fig(ourFirst, rgFirst), settled: fig(ourSettled, rgSettled) };
}

async function longLived(
  rg: string,
  root: string,
  toml: string,
  base: string,
  trees: string,
  runs: number,
  peak: { kib: number },
): Promise<{ figures: Record<string, Figure>; ignored: { search: number; find: number } }> {
  const s = await openServe(BIN, toml, base, "ignore-bench");
  // The same repository without node_modules, served by a serve of its own.
  const bareBase = path.join(base, "bare-serve");
  fs.mkdirSync(bareBase);
  const bareRoot = path.join(trees, "bare");
  ensure(bareRoot, false);
  const bare = await openServe(BIN, writeServeConfig(bareBase, "bench", bareRoot, { search_timeout_seconds: 300 }), bareBase, "ignore-bench-bare");
  const r = {
    search: series(),
    rgSearch: series(),
    find: series(),
    rgFiles: series(),
    searchAll: series(),
    rgSearchAll: series(),
    findAll: series(),
    rgFilesAll: series(),
    bareSearch: series(),
    bareFind: series(),
  };
  // warm the page cache, the dentry cache and serve's compiled code once, unmeasured
  rgRun(rg, root, ["--no-ignore", "-F", QUERY], 1, series());
  await ours(s, "search_text", { query: QUERY, include_ignored: true }, series());
  await ours(bare, "search_text", { query: QUERY }, series());
  let ignored = { search: 0, find: 0 };
  for (let i = 0; i < runs; i++) {
    ignored.search = (await ours(s, "search_text", { query: QUERY }, r.search)).ignored;
    rgRun(rg, root, ["-F", QUERY], 1, r.rgSearch);
    ignored.find = (await ours(s, "find_files", { pattern: "zq-no-such-*" }, r.find)).ignored;
    rgRun(rg, root, ["--files"], 0, r.rgFiles);
    await ours(s, "search_text", { query: QUERY, include_ignored: true }, r.searchAll);
    rgRun(rg, root, ["--no-ignore", "-F", QUERY], 1, r.rgSearchAll);
    await ours(s, "find_files", { pattern: "zq-no-such-*", include_ignored: true }, r.findAll);
    rgRun(rg, root, ["--no-ignore", "--files"], 0, r.rgFilesAll);
    await ours(bare, "search_text", { query: QUERY }, r.bareSearch);
    await ours(bare, "find_files", { pattern: "zq-no-such-*" }, r.bareFind);
  }
  peak.kib = Math.max(peak.kib, vmHwmKiB(s.pid), vmHwmKiB(bare.pid));
  await s.close();
  await bare.close();
  console.log(`runs: ${runs}, interleaved; one long-lived serve; rg spawned fresh each time`);
  row("search_text (ignore files on)", r.search, r.rgSearch, "rg -F");
  row("find_files (ignore files on)", r.find, r.rgFiles, "rg --files");
  row("search_text include_ignored", r.searchAll, r.rgSearchAll, "rg --no-ignore -F");
  row("find_files include_ignored", r.findAll, r.rgFilesAll, "rg --no-ignore --files");
  row("search_text, node_modules ignored", r.search, r.bareSearch, "the tree without node_modules");
  row("find_files, node_modules ignored", r.find, r.bareFind, "the tree without node_modules");
  console.log(`ignored reported: search_text ${ignored.search}, find_files ${ignored.find} (node_modules is one entry: never opened)`);
  console.log(
    `what ignoring saves serverfs: search_text ${(median(r.searchAll.ms) / median(r.search.ms)).toFixed(1)}x faster, find_files ${(median(r.findAll.ms) / median(r.find.ms)).toFixed(1)}x faster than with include_ignored`,
  );
  return {
    figures: {
      search: fig(r.search, r.rgSearch),
      find: fig(r.find, r.rgFiles),
      search_all: fig(r.searchAll, r.rgSearchAll),
      find_all: fig(r.findAll, r.rgFilesAll),
      search_vs_bare: fig(r.search, r.bareSearch),
      find_vs_bare: fig(r.find, r.bareFind),
    },
    ignored,
  };
}

await main();
