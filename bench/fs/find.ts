// find_files vs `find <root> -name PATTERN` on a generated >= 200,000-entry tree (warm cache).
// Both walk the whole tree (the pattern matches a minority of files); runs are interleaved.
//
// usage: bun bench/fs/find.ts [existing-tree-dir] [runs]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createFileService } from "../../src/fs/index.ts";
import { registry, workdir } from "../../test/fs/registry.ts";
import { generateFindTree, machine, median } from "./gen-tree.ts";

const PATTERN = "f7*.rs";

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
  const runs = Number(process.argv[3] ?? 7);
  let root = process.argv[2];
  let generated = false;
  if (root === undefined) {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-find-"));
    generateFindTree(root);
    generated = true;
  }
  console.log(machine());
  console.log(`tree: ${countEntries(root)} entries`);
  // a limit above the match count, so both sides walk everything
  const svc = createFileService(
    registry([workdir("bench", root, { read_only: true })], { max_search_results: 1_000_000, max_walk_entries: 10_000_000 }),
  );
  Bun.spawnSync(["find", root, "-name", PATTERN]); // warm the dentry cache
  await svc.findFiles({ workdir: "bench", pattern: PATTERN, limit: 1_000_000 });
  // paired, interleaved runs: both sides see the same machine load
  const findTimes: number[] = [];
  const ourTimes: number[] = [];
  let findCount = 0;
  let ourCount = 0;
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    const r = Bun.spawnSync(["find", root, "-name", PATTERN]);
    findTimes.push(performance.now() - t0);
    findCount = r.stdout.toString().split("\n").filter(Boolean).length;
    t0 = performance.now();
    const o = await svc.findFiles({ workdir: "bench", pattern: PATTERN, limit: 1_000_000 });
    ourTimes.push(performance.now() - t0);
    ourCount = o.returned;
  }
  if (ourCount !== findCount) throw new Error(`match counts differ: serverfs ${ourCount}, find ${findCount}`);
  const f = median(findTimes);
  const o = median(ourTimes);
  console.log(`baseline: find -name '${PATTERN}': median ${f.toFixed(0)} ms over ${runs} runs [${findTimes.map((x) => x.toFixed(0)).join(", ")}], ${findCount} matches`);
  console.log(`serverfs findFiles: median ${o.toFixed(0)} ms over ${runs} runs [${ourTimes.map((x) => x.toFixed(0)).join(", ")}], ${ourCount} matches`);
  console.log(`ratio: ${(o / f).toFixed(2)}x (target <= 1.5x)`);
  svc.close();
  if (generated) fs.rmSync(root, { recursive: true, force: true });
}

await main();
