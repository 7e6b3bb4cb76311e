// The search engine's Targets table in one run: every row measured through MCP on the compiled
// binary against its baseline, by the benchmark that owns it, one child process after another,
// then one table with the machine, the load average, and serve's and the Bridge's peak RSS.
//
// usage: ./node_modules/.bin/bun build/compile.ts linux-x64      (this script builds nothing)
//        bun bench/targets.ts [--runs N] [--quick] [--keep] [--trees DIR] [--only 1,2,9,rss]
//   --runs N    runs (iterations for row 9) of every row, instead of each benchmark's default
//   --quick     a smoke check: 3 runs per file row, 10 ACP iterations, one Bridge RSS round
//   --keep      leave the generated trees in place and print where they are
//   --trees DIR generate the trees in DIR, or reuse those a previous run finished there (kept)
//   --only LIST only the rows listed (1-9, 9a quiet, 9b busy, and `rss` for the Bridge's RSS bench)
// --quick took 7-8 minutes on the 2-core machine at a load average of 9; a full run (each
// benchmark's own default runs) took 3-4 minutes on the quiet 2-core AMD EPYC VM (2026-12-07) and
// up to 20 on a loaded one. Making and removing the trees (about 300 MB and 280,000 files in a
// temp dir) takes 1-3 minutes more, depending on the disk's load.
// Exit status: 0 when every row was measured (met or MISSED), 1 when a row has no figure (its
// benchmark failed or printed no RESULT line), 2 when the compiled binary, rg or find is missing.
//
// Peak RSS targets: serve ≤ 120 MiB (the highest VmHWM any row's serve reached), the Bridge ≤ 80 MiB
// (the highest VmHWM of the Bridges of the rss benchmark and, when its RESULT says, row 9's).
//
// Rows and their benchmarks (baselines run fresh each time, interleaved run by run with ours):
//   1, 2  bench/fs/search.ts                     literal, no match, 20,000 files: the first call of
//                                                a fresh serve, and the 5th call of a warm one / rg -F
//   3     bench/fs/search.ts CASE_INSENSITIVE=1  case-insensitive literal, warm / rg -i -F
//   4, 5  bench/fs/search-regex.ts REGEX_PATTERN  character classes, and a heavy regex, warm / rg -e
//   6     bench/fs/ignore.ts IGNORE_PHASES=first a repository whose 60,000-file node_modules is
//                                                ignored, first call of a fresh serve / rg
//   1s, 6s  rows 1 and 6 again, the first call sent only once the fresh serve's full server is up
//         (it answered a ping, then 500 ms): no target of their own, they show how much of rows 1
//         and 6 is the wait for the server's load
//   7     bench/fs/find.ts                       find_files over 200,000 entries / find -name
//   8     bench/startup/serve-cold.ts if present, else bench/fs/startup.ts: cold start to
//         initialize + tools/list / a compiled Bun hello-world answering with serve's bytes;
//   8b    the same run of serve-cold.ts: serve started with --config FILE instead of --workdir
//   9a/9b bench/acp/overhead.ts, quiet and with --busy: submit → done p50 / a bare ACP SDK client
//   rss   bench/bridge/rss.bench.ts: the Bridge with 16 active tasks
// Rows 1-5 share one generated 20,000-file tree; row 7 has its 200,000-entry tree; row 6 its
// repository (bench/fs/gen-tree.ts and bench/fs/ignore.ts make them).
//
// The contract: each benchmark's LAST line starting with `RESULT ` is `RESULT {json}`. A
// benchmark measuring one figure puts it at the top level:
//   ours_ms      number  our median (row 9: serverfs submit → done p50), ms
//   baseline_ms  number  the baseline's median (row 9: the bare client's p50), same run, ms
//   ratio        number  ours_ms / baseline_ms (rows 1-8; checked against the target)
//   added_ms     number  row 9 only: ours_ms - baseline_ms (computed from them when absent)
//   busy         bool    row 9 only: true when one CPU-bound process per core ran beside it
//                        (asked with --busy; the busy row counts only when RESULT says true)
//   peak_rss_kib number  serve's peak resident set (VmHWM) over the serves it ran, KiB
//   bridge_peak_rss_kib, serve_peak_rss_kib  number  row 9: the Bridge's and serve's VmHWM, KiB
// bench/fs/search.ts puts its figures under `fresh` and `warm`, search-regex.ts under `cases[0]`,
// ignore.ts under `first_call`; each script's header names its fields. A row whose benchmark
// prints no RESULT line shows "no RESULT line from <script>".
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { machineLine } from "./lib/machine.ts";
import { runChild, stopChildren } from "./lib/child.ts";
import { parseResult } from "./lib/result.ts";
import { jobs, num, selected, type Outcome, type Row } from "./lib/target-rows.ts";
import { mib, printTable } from "./lib/target-table.ts";

const ROOT = path.resolve(import.meta.dir, "..");
const BIN = process.env.SERVERFS_BIN ?? path.join(ROOT, "dist/serverfs-linux-x64");
const BUILT_FROM = ["src", "platform", "build", "package.json", "package-lock.json"];
const SERVE_LIMIT_KIB = 120 * 1024;
const BRIDGE_LIMIT_KIB = 80 * 1024;

interface Options {
  runs: number | null;
  quick: boolean;
  keep: boolean;
  trees: string | null;
  only: Set<string> | null;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { runs: null, quick: false, keep: false, trees: null, only: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      return v;
    };
    if (a === "--quick") o.quick = true;
    else if (a === "--keep") o.keep = true;
    else if (a === "--runs") {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) usage("--runs needs a whole number of at least 1");
      o.runs = n;
    } else if (a === "--trees") o.trees = path.resolve(value());
    else if (a === "--only") o.only = new Set(value().split(","));
    else usage(`unknown argument ${a}`);
  }
  return o;
}

function usage(why: string): never {
  console.error(`bench/targets.ts: ${why}\nusage: bun bench/targets.ts [--runs N] [--quick] [--keep] [--trees DIR] [--only 1,2,9,rss]`);
  process.exit(2);
}

/** A tree generated once into `dir` (bench/fs/gen-tree.ts), reused when its marker says it is whole. */
async function ensureTree(kind: "search" | "find", dir: string): Promise<void> {
  const marker = `${dir}.complete`;
  if (fs.existsSync(marker)) return;
  fs.rmSync(dir, { recursive: true, force: true });
  const t0 = performance.now();
  const r = await runChild(`tree:${kind}`, [process.execPath, "bench/fs/gen-tree.ts", kind, dir], { cwd: ROOT, env: process.env });
  if (r.exitCode !== 0) throw new Error(`bench/fs/gen-tree.ts ${kind} exited ${r.exitCode}`);
  fs.writeFileSync(marker, "");
  console.log(`${kind} tree made in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

/** A path as the table shows it: relative to the checkout when inside it. */
const shown = (p: string): string => (p.startsWith(`${ROOT}/`) ? path.relative(ROOT, p) : p);

const loadLine = (): string => Bun.spawnSync(["uptime"]).stdout.toString().trim();

function describeBinary(): string {
  const st = fs.statSync(BIN);
  const git = (...args: string[]): string => Bun.spawnSync(["git", "-C", ROOT, ...args]).stdout.toString().trim();
  const hash = git("log", "-1", "--format=%h");
  // what the executable is made of; a commit to bench/ or docs/ alone leaves it current
  const built = Number(git("log", "-1", "--format=%ct", "--", ...BUILT_FROM)) * 1000;
  const dirty = git("status", "--porcelain", "--untracked-files=no", "--", ...BUILT_FROM) !== "";
  const stale = st.mtimeMs < built ? `, OLDER than the last commit to ${BUILT_FROM.join(", ")}` : "";
  return `binary: ${shown(BIN)}, ${(st.size / 1e6).toFixed(0)} MB, built ${st.mtime.toISOString()}${stale}; checkout ${hash}${dirty ? ` (with uncommitted changes in ${BUILT_FROM.join(", ")})` : ""}`;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(BIN)) {
    console.error(`bench/targets.ts: no compiled binary at ${shown(BIN)}; it builds nothing itself: run ./node_modules/.bin/bun build/compile.ts linux-x64 first`);
    process.exit(2);
  }
  // rows 1-7's baselines: a clear refusal instead of a stack trace from the first spawn
  const missing = (
    [
      ["rg", "ripgrep (rows 1-6): apt-get install -y ripgrep"],
      ["find", "find (row 7): apt-get install -y findutils"],
    ] as const
  ).filter(([exe]) => Bun.which(exe) === null);
  if (missing.length > 0) {
    for (const [, what] of missing) console.error(`bench/targets.ts: no ${what}`);
    process.exit(2);
  }
  const started = performance.now();
  const clock = (): string => {
    const s = Math.round((performance.now() - started) / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  };
  const own = o.trees === null;
  const work = o.trees ?? fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-targets-"));
  fs.mkdirSync(work, { recursive: true });
  const cleanup = (): void => {
    if (!own || o.keep) return;
    const t0 = performance.now();
    fs.rmSync(work, { recursive: true, force: true });
    console.log(`\ntrees removed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  };
  // Stopped by hand or by a time limit: the row's bench and everything it started go too (a serve,
  // a Bridge, an agent left running would skew every later run), then the trees.
  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const) {
    process.on(sig, () => {
      stopChildren();
      cleanup();
      process.exit(code);
    });
  }
  const header = [
    machineLine(),
    `load at start: ${loadLine()}`,
    describeBinary(),
    `${Bun.spawnSync(["rg", "--version"]).stdout.toString().split("\n")[0]}; ${Bun.spawnSync(["find", "--version"]).stdout.toString().split("\n")[0]}`,
    `mode: ${o.quick ? "--quick" : "full"}${o.runs !== null ? `, --runs ${o.runs}` : ""}; trees in ${work}${own && !o.keep ? " (removed at the end)" : " (kept)"}`,
  ];
  for (const l of header) console.log(l);

  const rows: Row[] = [];
  const serveRss: { script: string; kib: number }[] = [];
  const bridgeRss: { script: string; kib: number; note: string }[] = [];
  try {
    for (const job of jobs(o, BIN).filter((j) => selected(o, j))) {
      const env: Record<string, string | undefined> = { ...process.env, SERVERFS_BIN: BIN, CANDIDATE: BIN, ...job.env };
      const args = [...job.args];
      if (job.tree === "search") {
        const dir = path.join(work, "search-tree");
        await ensureTree("search", dir);
        if (job.script === "bench/fs/search.ts") args.unshift(dir);
        else env.SEARCH_TREE = dir;
      } else if (job.tree === "find") {
        const dir = path.join(work, "find-tree");
        await ensureTree("find", dir);
        args.unshift(dir);
      }
      if (job.script === "bench/fs/ignore.ts") env.IGNORE_TREES = path.join(work, "ignore-repo");
      const name = job.rows.length > 0 ? `row ${[...new Set(job.rows.map((r) => r.id))].join(",")}` : "rss";
      const envShown = Object.entries(job.env).map(([k, v]) => `${k}=${JSON.stringify(v)} `).join("");
      console.log(`\n== [${clock()}] ${name}: ${envShown}bun ${job.script} ${args.map(shown).join(" ")}`);
      const t0 = performance.now();
      const r = await runChild(name, [process.execPath, job.script, ...args], { cwd: ROOT, env });
      console.log(`== ${name}: exit ${r.exitCode}, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      let result: Record<string, unknown> | null = null;
      let why: string | null = null;
      try {
        result = parseResult(r.stdout);
      } catch (err) {
        why = `unreadable RESULT line from ${job.script}: ${(err as Error).message}`;
      }
      if (why === null && r.exitCode !== 0) why = `${job.script} exited ${r.exitCode}${r.lastError ? `: ${r.lastError}` : ""}`;
      if (why === null && result === null) why = `no RESULT line from ${job.script}`;
      if (result !== null && why === null) {
        if (num(result.peak_rss_kib) && job.script !== "bench/bridge/rss.bench.ts") serveRss.push({ script: job.script, kib: result.peak_rss_kib });
        if (num(result.serve_peak_rss_kib)) serveRss.push({ script: job.script, kib: result.serve_peak_rss_kib });
        if (num(result.bridge_peak_rss_kib)) bridgeRss.push({ script: job.script, kib: result.bridge_peak_rss_kib, note: result.busy === true ? "ACP tasks, busy" : "ACP tasks" });
        if (job.script === "bench/bridge/rss.bench.ts" && num(result.peak_rss_kib)) {
          bridgeRss.push({ script: job.script, kib: result.peak_rss_kib, note: `16 active tasks, median RSS ${String(result.active_mib)} MiB, after churn ${String(result.after_churn_mib)} MiB` });
        }
      }
      if (job.rows.length === 0 && why !== null) bridgeRss.push({ script: job.script, kib: NaN, note: why });
      for (const spec of job.rows) {
        const outcome: Outcome = why !== null ? { kind: "none", why } : spec.pick(result!);
        const peak = result === null ? null : num(result.peak_rss_kib) ? result.peak_rss_kib : num(result.serve_peak_rss_kib) ? result.serve_peak_rss_kib : null;
        rows.push({ id: spec.id, label: spec.label, baseline: spec.baseline, target: spec.target, additive: spec.additive, outcome, servePeakKiB: peak });
      }
    }
  } finally {
    cleanup();
  }

  console.log(`\n== Targets (issue "[9/9] search engine"): through MCP on the compiled binary, baselines in the same run`);
  for (const l of header.slice(0, 3)) console.log(l);
  console.log(`load at end:   ${loadLine()}`);
  printTable(rows);
  const servePeak = serveRss.length > 0 ? Math.max(...serveRss.map((s) => s.kib)) : NaN;
  if (Number.isNaN(servePeak)) console.log("serve peak RSS: no figure (no row reported one)");
  else {
    const from = serveRss.find((s) => s.kib === servePeak)!.script;
    console.log(`serve peak RSS (VmHWM, highest over every serve above): ${mib(servePeak)} in ${from}; target ≤ ${mib(SERVE_LIMIT_KIB)}: ${servePeak <= SERVE_LIMIT_KIB ? "met" : "MISSED"}`);
  }
  const measured = bridgeRss.filter((b) => num(b.kib));
  for (const b of bridgeRss.filter((x) => !num(x.kib))) console.log(`Bridge peak RSS: no figure from ${b.script}: ${b.note}`);
  if (measured.length === 0 && bridgeRss.length === 0 && (o.only === null || o.only.has("rss"))) console.log("Bridge peak RSS: no figure");
  if (measured.length > 0) {
    const peak = Math.max(...measured.map((b) => b.kib));
    for (const b of measured) console.log(`Bridge peak RSS (VmHWM): ${mib(b.kib)} in ${b.script} (${b.note})`);
    console.log(`Bridge peak RSS, highest: ${mib(peak)}; target ≤ ${mib(BRIDGE_LIMIT_KIB)}: ${peak <= BRIDGE_LIMIT_KIB ? "met" : "MISSED"}`);
  }
  console.log(`took ${((performance.now() - started) / 60_000).toFixed(1)} min${own && o.keep ? `; trees kept in ${work}` : ""}`);
  const unmeasured = rows.some((r) => r.outcome.kind === "none") || bridgeRss.some((b) => !num(b.kib));
  process.exit(unmeasured ? 1 : 0);
}

await main();
