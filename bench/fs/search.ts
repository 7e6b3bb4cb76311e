// search_text through MCP on the COMPILED `serverfs serve` vs `rg --fixed-strings` spawned fresh,
// on the generated tree (>= 20,000 files, >= 200 MB, mixed sizes, some binary, some invalid
// UTF-8), with a query that matches nothing, so both scan everything (warm page cache).
//   fresh: the FIRST search_text call of a newly started serve (after initialize + tools/list)
//          against a fresh rg, interleaved run by run;
//   settled: the same, in another new serve, sent only once its full server answered a ping
//          and SETTLE_MS passed (bench/lib/serve-session.ts): fresh minus settled is the wait
//          for the server's load, settled minus warm what a first search costs a fresh process;
//   warm:  the FIFTH call of a long-lived serve against a fresh rg, interleaved run by run.
// Also prints serve's peak RSS (VmHWM) over the warm session.
//
// CASE_INSENSITIVE=1: the same with case_sensitive=false against `rg -i -F`.
// SEARCH_PHASES=warm (or fresh, settled, or a comma-separated list): only those; the default runs all three.
// Last line: RESULT {"bench":"search","case_insensitive","runs","files","bytes",
//   "fresh":{ours_ms,baseline_ms,ratio}|null,"settled":{...}|null,"warm":{...}|null,"peak_rss_kib"} (medians; the peak
//   is the highest VmHWM of every serve it ran), for bench/targets.ts.
//
// usage: bun build/compile.ts linux-x64 && [CASE_INSENSITIVE=1] bun bench/fs/search.ts [existing-tree-dir] [runs]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { machineLine } from "../lib/machine.ts";
import { figure, printResult, type Figure } from "../lib/result.ts";
import { cpuNs, openServe, settle, SETTLE_MS, spawnCpuMs, vmHwmKiB, writeServeConfig, type ServeSession } from "../lib/serve-session.ts";
import { generateSearchTree, machine, median, treeSize } from "./gen-tree.ts";

const QUERY = "zq-no-such-token-7781";
const FOLD = process.env.CASE_INSENSITIVE === "1";
const PHASES = (process.env.SEARCH_PHASES ?? "fresh,settled,warm").split(",");
if (PHASES.some((p) => p !== "fresh" && p !== "settled" && p !== "warm")) {
  throw new Error(`SEARCH_PHASES: expected fresh, settled and/or warm, got ${process.env.SEARCH_PHASES}`);
}
const ROOT = path.resolve(import.meta.dir, "../..");
const BIN = process.env.SERVERFS_BIN ?? path.join(ROOT, "dist/serverfs-linux-x64");

const cpu = { ours: [] as number[], rg: [] as number[] };

async function search(s: ServeSession): Promise<number> {
  const c0 = cpuNs(s.pid);
  const t0 = performance.now();
  const r = await s.call("search_text", { workdir: "bench", query: QUERY, limit: 100, ...(FOLD ? { case_sensitive: false } : {}) });
  const ms = performance.now() - t0;
  cpu.ours.push((cpuNs(s.pid) - c0) / 1e6);
  const out = r.structuredContent as { returned: number; truncated: boolean } | undefined;
  if (r.isError || out === undefined || out.returned !== 0 || out.truncated) throw new Error(`search_text: ${JSON.stringify(r.structuredContent)}`);
  return ms;
}

function fmt(xs: number[]): string {
  return `median ${median(xs).toFixed(0)} ms [${xs.map((x) => x.toFixed(0)).join(", ")}]`;
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  const runs = Number(process.argv[3] ?? 7);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-search-"));
  let root = process.argv[2];
  if (root === undefined) {
    root = path.join(base, "tree");
    generateSearchTree(root);
  }
  const { files, bytes } = treeSize(root);
  console.log(machineLine());
  console.log(machine());
  console.log(`tree: ${files} files, ${(bytes / 1e6).toFixed(1)} MB; binary ${path.relative(ROOT, BIN)}`);
  const rg = Bun.which("rg");
  if (rg === null) throw new Error("ripgrep (rg) not installed: apt-get install -y ripgrep");
  const rgVersion = Bun.spawnSync([rg, "--version"]).stdout.toString().split("\n")[0];
  const rgRun = (): number => {
    const t0 = performance.now();
    const r = Bun.spawnSync([rg, "--fixed-strings", ...(FOLD ? ["--ignore-case"] : []), "--no-messages", "--", QUERY, root]);
    const ms = performance.now() - t0;
    if (r.exitCode !== 1) throw new Error(`rg exited ${r.exitCode}`);
    cpu.rg.push(spawnCpuMs(r));
    return ms;
  };
  const toml = writeServeConfig(base, "bench", root, { search_timeout_seconds: 120 });
  rgRun(); // warm the page cache and the dentry cache

  let peakKiB = 0;

  // fresh: first call of a new serve vs a fresh rg
  const rgFresh: number[] = [];
  const ourFresh: number[] = [];
  for (let i = 0; i < (PHASES.includes("fresh") ? runs : 0); i++) {
    rgFresh.push(rgRun());
    const s = await openServe(BIN, toml, base, "search-bench");
    ourFresh.push(await search(s));
    peakKiB = Math.max(peakKiB, vmHwmKiB(s.pid));
    await s.close();
  }

  // settled: the first call of a new serve whose full server is up, vs a fresh rg
  const rgSettled: number[] = [];
  const ourSettled: number[] = [];
  for (let i = 0; i < (PHASES.includes("settled") ? runs : 0); i++) {
    rgSettled.push(rgRun());
    const s = await openServe(BIN, toml, base, "search-bench");
    await settle(s);
    ourSettled.push(await search(s));
    peakKiB = Math.max(peakKiB, vmHwmKiB(s.pid));
    await s.close();
  }

  // warm: the fifth call of one long-lived serve vs a fresh rg
  const rgWarm: number[] = [];
  const ourWarm: number[] = [];
  const allCalls: number[] = [];
  let hwm = NaN;
  if (PHASES.includes("warm")) {
    const s = await openServe(BIN, toml, base, "search-bench");
    for (let i = 0; i < runs; i++) {
      for (let k = 0; k < 4; k++) allCalls.push(await search(s));
      rgWarm.push(rgRun());
      const ms = await search(s);
      ourWarm.push(ms);
      allCalls.push(ms);
    }
    peakKiB = Math.max(peakKiB, vmHwmKiB(s.pid));
    hwm = vmHwmKiB(s.pid) / 1024;
    await s.close();
  }

  if (FOLD) console.log("case-insensitive: search_text case_sensitive=false vs rg --ignore-case");
  let fresh: Figure | null = null;
  if (ourFresh.length > 0) {
    console.log(`baseline: ${rgVersion} --fixed-strings${FOLD ? " --ignore-case" : ""} (no match, fresh process), paired with fresh: ${fmt(rgFresh)}`);
    console.log(`serverfs search_text, FIRST call of a fresh serve: ${fmt(ourFresh)}`);
    console.log(`ratio fresh: ${(median(ourFresh) / median(rgFresh)).toFixed(2)}x (target <= 1.0x)`);
    fresh = figure(median(ourFresh), median(rgFresh));
  }
  let settled: Figure | null = null;
  if (ourSettled.length > 0) {
    console.log(`baseline: rg, paired with settled: ${fmt(rgSettled)}`);
    console.log(`serverfs search_text, FIRST call of a fresh serve whose server is up (a ping answered, then ${SETTLE_MS} ms): ${fmt(ourSettled)}`);
    console.log(`ratio settled: ${(median(ourSettled) / median(rgSettled)).toFixed(2)}x`);
    settled = figure(median(ourSettled), median(rgSettled));
  }
  let warm: Figure | null = null;
  if (ourWarm.length > 0) {
    console.log(`baseline: rg, paired with warm: ${fmt(rgWarm)}`);
    console.log(`serverfs search_text, FIFTH call of a long-lived serve: ${fmt(ourWarm)}`);
    // the search issue's targets: 0.8x for a literal, 1.0x case-insensitive
    console.log(`ratio warm: ${(median(ourWarm) / median(rgWarm)).toFixed(2)}x (target <= ${FOLD ? "1.0" : "0.8"}x)`);
    warm = figure(median(ourWarm), median(rgWarm));
  }
  if (ourFresh.length > 0 && ourSettled.length > 0 && ourWarm.length > 0) {
    const [f, s, w] = [median(ourFresh), median(ourSettled), median(ourWarm)];
    console.log(
      `where the first call's time goes: fresh ${f.toFixed(0)} ms = waiting for the server's load ${(f - s).toFixed(0)} ms ` +
        `+ settled first search ${s.toFixed(0)} ms (= warm ${w.toFixed(0)} ms + ${(s - w).toFixed(0)} ms a fresh process pays: the engine's compiles, first reads)`,
    );
  }
  // CPU time (all threads) says how much work each side does, whatever else the machine runs
  console.log(`CPU per search (all threads): serverfs median ${median(cpu.ours).toFixed(0)} ms, rg median ${median(cpu.rg).toFixed(0)} ms: ${(median(cpu.ours) / median(cpu.rg)).toFixed(2)}x`);
  if (allCalls.length > 0) console.log(`long-lived serve: ${allCalls.length} searches, peak RSS ${hwm.toFixed(1)} MiB (target <= 120 MiB)`);
  printResult({ bench: "search", case_insensitive: FOLD, runs, files, bytes, fresh, settled, warm, peak_rss_kib: peakKiB });
  fs.rmSync(base, { recursive: true, force: true });
}

await main();
