// find_files through MCP on the COMPILED `serverfs serve` vs `find <root> -name PATTERN` spawned
// fresh, on a generated >= 200,000-entry tree (warm cache). The pattern matches nothing, so both
// walk the whole tree; serve is long-lived (one warm-up call first), runs are interleaved so both
// sides see the same machine load. Also prints serve's peak RSS (VmHWM) after the walks.
// Last line: RESULT {"bench":"find","runs","entries","ours_ms","baseline_ms","ratio",
//   "peak_rss_kib"} (medians), for bench/targets.ts.
//
// usage: bun build/compile.ts linux-x64 && bun bench/fs/find.ts [existing-tree-dir] [runs]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { machineLine } from "../lib/machine.ts";
import { figure, printResult } from "../lib/result.ts";
import { cpuNs, openServe, spawnCpuMs, vmHwmKiB, writeServeConfig } from "../lib/serve-session.ts";
import { generateFindTree, machine, median } from "./gen-tree.ts";

const PATTERN = "no-such-*.rs";
const ROOT = path.resolve(import.meta.dir, "../..");
const BIN = process.env.SERVERFS_BIN ?? path.join(ROOT, "dist/serverfs-linux-x64");

function countEntries(root: string): number {
  let n = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      n++;
      if (e.isDirectory()) walk(path.join(d, e.name));
    }
  };
  walk(root);
  return n;
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  const runs = Number(process.argv[3] ?? 9);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-find-"));
  let root = process.argv[2];
  if (root === undefined) {
    root = path.join(base, "tree");
    generateFindTree(root);
  }
  const entries = countEntries(root);
  console.log(machineLine());
  console.log(machine());
  console.log(`tree: ${entries} entries; binary ${path.relative(ROOT, BIN)}`);
  const toml = writeServeConfig(base, "bench", root, { max_walk_entries: 10_000_000, search_timeout_seconds: 120 });
  const s = await openServe(BIN, toml, base, "find-bench");
  const cpu = { ours: [] as number[], find: [] as number[] };
  const ours = async (): Promise<number> => {
    const c0 = cpuNs(s.pid);
    const t0 = performance.now();
    const r = await s.call("find_files", { workdir: "bench", pattern: PATTERN, limit: 100 });
    const ms = performance.now() - t0;
    cpu.ours.push((cpuNs(s.pid) - c0) / 1e6);
    const out = r.structuredContent as { returned: number; truncated: boolean } | undefined;
    if (r.isError || out === undefined || out.returned !== 0 || out.truncated) throw new Error(`find_files: ${JSON.stringify(r.structuredContent)}`);
    return ms;
  };
  Bun.spawnSync(["find", root, "-name", PATTERN]); // warm the dentry cache
  await ours();
  const findTimes: number[] = [];
  const ourTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync(["find", root, "-name", PATTERN]);
    findTimes.push(performance.now() - t0);
    if (r.exitCode !== 0 || r.stdout.length !== 0) throw new Error("find failed or matched");
    cpu.find.push(spawnCpuMs(r));
    ourTimes.push(await ours());
  }
  const hwmKiB = vmHwmKiB(s.pid);
  const hwm = hwmKiB / 1024;
  await s.close();
  const f = median(findTimes);
  const o = median(ourTimes);
  console.log(`baseline: find -name '${PATTERN}' (fresh process): median ${f.toFixed(0)} ms over ${runs} runs [${findTimes.map((x) => x.toFixed(0)).join(", ")}]`);
  console.log(`serverfs find_files (MCP, long-lived serve): median ${o.toFixed(0)} ms over ${runs} runs [${ourTimes.map((x) => x.toFixed(0)).join(", ")}]`);
  console.log(`ratio: ${(o / f).toFixed(2)}x (target <= 0.8x)`);
  // CPU time says how much work each side does, whatever else the machine runs
  console.log(`CPU per walk: serverfs median ${median(cpu.ours).toFixed(0)} ms, find median ${median(cpu.find).toFixed(0)} ms: ${(median(cpu.ours) / median(cpu.find)).toFixed(2)}x`);
  console.log(`serve peak RSS after ${runs + 1} walks: ${hwm.toFixed(1)} MiB (target <= 120 MiB)`);
  printResult({ bench: "find", runs, entries, ...figure(o, f), peak_rss_kib: hwmKiB });
  fs.rmSync(base, { recursive: true, force: true });
}

await main();
