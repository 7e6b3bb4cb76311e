// search_text vs `rg --fixed-strings` on the same generated tree (no-match query, warm cache).
// Our search runs in a child process that reports its timings and its peak RSS (VmHWM).
//
// usage: bun bench/fs/search.ts [existing-tree-dir] [runs]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateSearchTree } from "./gen-tree.ts";
import { machine, median } from "./machine.ts";

const QUERY = "zq-no-such-token-7781";

async function child(root: string, runs: number): Promise<void> {
  const { createFileService } = await import("../../src/fs/index.ts");
  const { registry, workdir } = await import("./registry.ts");
  const svc = createFileService(registry([workdir("bench", root, { read_only: true })], { search_timeout_seconds: 120 }));
  const hwmBefore = vmHwm();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = await svc.searchText({ workdir: "bench", query: QUERY, limit: 100 });
    times.push(performance.now() - t0);
    if (r.returned !== 0) throw new Error("benchmark query unexpectedly matched");
  }
  console.log(JSON.stringify({ times, hwmBeforeKiB: hwmBefore, hwmKiB: vmHwm() }));
}

function vmHwm(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));
  return m ? Number(m[1]) : -1;
}

function du(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        files++;
        bytes += fs.statSync(p).size;
      }
    }
  };
  walk(root);
  return { files, bytes };
}

async function main(): Promise<void> {
  if (process.argv[2] === "--child") return child(process.argv[3] as string, Number(process.argv[4]));
  const runs = Number(process.argv[3] ?? 7);
  let root = process.argv[2];
  let generated = false;
  if (root === undefined) {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-search-"));
    generateSearchTree(root);
    generated = true;
  }
  const { files, bytes } = du(root);
  console.log(machine());
  console.log(`tree: ${files} files, ${(bytes / 1e6).toFixed(1)} MB`);
  const rg = Bun.which("rg");
  if (rg === null) throw new Error("ripgrep (rg) not installed: apt-get install -y ripgrep");
  const rgVersion = Bun.spawnSync([rg, "--version"]).stdout.toString().split("\n")[0];
  // warm the page cache and the dentry cache
  Bun.spawnSync([rg, "--fixed-strings", "--no-messages", "--", QUERY, root]);
  const rgTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync([rg, "--fixed-strings", "--no-messages", "--", QUERY, root]);
    rgTimes.push(performance.now() - t0);
    if (r.exitCode !== 1) throw new Error(`rg exited ${r.exitCode}`);
  }
  const proc = Bun.spawnSync([process.execPath, import.meta.path, "--child", root, String(runs)], { stderr: "inherit" });
  if (proc.exitCode !== 0) throw new Error("search child failed");
  const res = JSON.parse(proc.stdout.toString().trim().split("\n").pop() as string) as { times: number[]; hwmBeforeKiB: number; hwmKiB: number };
  const rgMed = median(rgTimes);
  const ourMed = median(res.times);
  console.log(`baseline: ${rgVersion} --fixed-strings (no match): median ${rgMed.toFixed(0)} ms over ${runs} runs [${rgTimes.map((x) => x.toFixed(0)).join(", ")}]`);
  console.log(`serverfs searchText (no match): median ${ourMed.toFixed(0)} ms over ${runs} runs [${res.times.map((x) => x.toFixed(0)).join(", ")}]`);
  console.log(`ratio: ${(ourMed / rgMed).toFixed(2)}x (target <= 2.0x)`);
  console.log(`peak RSS of the searching process: ${(res.hwmKiB / 1024).toFixed(1)} MiB (before searching ${(res.hwmBeforeKiB / 1024).toFixed(1)} MiB; target <= 120 MiB)`);
  if (generated) fs.rmSync(root, { recursive: true, force: true });
}

await main();
