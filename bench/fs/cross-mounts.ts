// What cross_mounts = false costs: find_files, search_text and list_directory over the same
// generated tree in two workdirs, one crossing mounts (the default, the baseline) and one
// confined (one extra metadata-only open per listed entry). Runs are interleaved in one process,
// so both sides see the same machine load; resolver mode from argv (openat2 | walk).
//
// usage: bun bench/fs/cross-mounts.ts [runs] [openat2|walk]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { forceResolver } from "../../platform/fs/linux.ts";
import { createFileService } from "../../src/fs/index.ts";
import { registry, workdir } from "../../test/fs/registry.ts";
import { machineLine, median } from "../lib/machine.ts";
import { generateSearchTree } from "./gen-tree.ts";

const runs = Number(process.argv[2] ?? 7);
const mode = (process.argv[3] ?? "openat2") as "openat2" | "walk";
forceResolver(mode);
const root = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-xdev-"));
const stats = generateSearchTree(root);
const svc = createFileService(
  registry(
    [workdir("cross", root, { read_only: true }), workdir("confined", root, { read_only: true, cross_mounts: false })],
    { search_timeout_seconds: 120, max_walk_entries: 10_000_000 },
  ),
);
const ops = {
  find: (w: string) => svc.findFiles({ workdir: w, pattern: "*.zq-none", limit: 100 }),
  search: (w: string) => svc.searchText({ workdir: w, query: "zq-no-such-token-7781", limit: 100 }),
  list: (w: string) => svc.listDirectory({ workdir: w, limit: 500 }),
};
console.log(machineLine());
console.log(`tree: ${JSON.stringify(stats)}; resolver: ${mode}; ${runs} interleaved runs each`);
for (const [name, op] of Object.entries(ops)) {
  await op("cross");
  await op("confined"); // warm-up: JIT, dentry cache
  const t: Record<string, number[]> = { cross: [], confined: [] };
  for (let i = 0; i < runs; i++) {
    for (const w of ["cross", "confined"]) {
      const t0 = performance.now();
      await op(w);
      t[w]!.push(performance.now() - t0);
    }
  }
  const base = median(t.cross!);
  const conf = median(t.confined!);
  console.log(`${name}: cross_mounts=true (baseline) median ${base.toFixed(1)} ms, cross_mounts=false median ${conf.toFixed(1)} ms, ratio ${(conf / base).toFixed(2)}x`);
}
svc.close();
fs.rmSync(root, { recursive: true, force: true });
