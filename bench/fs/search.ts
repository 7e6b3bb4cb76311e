// search_text vs `rg --fixed-strings` on the same generated tree (no-match query, warm cache).
// Our search runs in a child process that reports its timings and its peak RSS (VmHWM); runs are
// interleaved with rg's, one each in turn, so both see the same machine load.
//
// usage: bun bench/fs/search.ts [existing-tree-dir] [runs]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateSearchTree, machine, median } from "./gen-tree.ts";

const QUERY = "zq-no-such-token-7781";

async function child(root: string): Promise<void> {
  const { createFileService } = await import("../../src/fs/index.ts");
  const { registry, workdir } = await import("../../test/fs/registry.ts");
  const svc = createFileService(registry([workdir("bench", root, { read_only: true })], { search_timeout_seconds: 120 }));
  const hwmBefore = vmHwm();
  // one search per "go" line on stdin, so the parent can interleave us with rg run by run
  for await (const line of console) {
    if (line.trim() !== "go") break;
    const t0 = performance.now();
    const r = await svc.searchText({ workdir: "bench", query: QUERY, limit: 100 });
    const ms = performance.now() - t0;
    if (r.returned !== 0) throw new Error("benchmark query unexpectedly matched");
    console.log(JSON.stringify({ ms }));
  }
  console.log(JSON.stringify({ hwmBeforeKiB: hwmBefore, hwmKiB: vmHwm() }));
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
  if (process.argv[2] === "--child") return child(process.argv[3] as string);
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
  const proc = Bun.spawn([process.execPath, import.meta.path, "--child", root], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = (async function* () {
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += new TextDecoder().decode(chunk);
      let i = buf.indexOf("\n");
      while (i !== -1) {
        yield buf.slice(0, i);
        buf = buf.slice(i + 1);
        i = buf.indexOf("\n");
      }
    }
  })();
  const ours = async (): Promise<number> => {
    proc.stdin.write("go\n");
    proc.stdin.flush();
    const r = await lines.next();
    return (JSON.parse(r.value as string) as { ms: number }).ms;
  };
  await ours(); // warm-up of our side (JIT, dentry cache)
  // paired, interleaved runs: both sides see the same machine load
  const rgTimes: number[] = [];
  const ourTimes: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync([rg, "--fixed-strings", "--no-messages", "--", QUERY, root]);
    rgTimes.push(performance.now() - t0);
    if (r.exitCode !== 1) throw new Error(`rg exited ${r.exitCode}`);
    ourTimes.push(await ours());
  }
  proc.stdin.write("end\n");
  proc.stdin.end();
  const res = { times: ourTimes, ...(JSON.parse((await lines.next()).value as string) as { hwmBeforeKiB: number; hwmKiB: number }) };
  await proc.exited;
  const rgMed = median(rgTimes);
  const ourMed = median(res.times);
  console.log(`baseline: ${rgVersion} --fixed-strings (no match): median ${rgMed.toFixed(0)} ms over ${runs} runs [${rgTimes.map((x) => x.toFixed(0)).join(", ")}]`);
  console.log(`serverfs searchText (no match): median ${ourMed.toFixed(0)} ms over ${runs} runs [${res.times.map((x) => x.toFixed(0)).join(", ")}]`);
  console.log(`ratio: ${(ourMed / rgMed).toFixed(2)}x (target <= 2.0x)`);
  console.log(`peak RSS of the searching process: ${(res.hwmKiB / 1024).toFixed(1)} MiB (before searching ${(res.hwmBeforeKiB / 1024).toFixed(1)} MiB; target <= 120 MiB)`);
  if (generated) fs.rmSync(root, { recursive: true, force: true });
}

await main();
