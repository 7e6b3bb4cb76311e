// search_text regex mode vs ripgrep on the same generated tree, against the COMPILED binary
// (`serverfs serve` over stdio, driven by the SDK client as a host drives it). Every pattern
// matches nothing in the tree, so both sides scan every byte (rg has no global match limit to
// compare with our early stop). Runs are interleaved, one of each in turn, so both sides see the
// same machine load; the literal mode vs `rg --fixed-strings` is measured the same way as the
// reference ratio. Warm page cache.
//
// REGEX_PATTERN=<regex>: measure that one pattern (regex mode, case-sensitive) against `rg -e`
//   instead of the list below; it must match nothing in the tree.
// SEARCH_TREE=<dir>: search this existing tree (bench/fs/gen-tree.ts search <dir>) instead of
//   generating one; it is left in place.
// Last line: RESULT {"bench":"search-regex","runs","files","cases":[{name,pattern,ours_ms,
//   baseline_ms,ratio}],"peak_rss_kib"} (medians; serve's VmHWM after every case), for
//   bench/targets.ts.
//
// usage: bun build/compile.ts linux-x64 && [REGEX_PATTERN=...] [SEARCH_TREE=dir] bun bench/fs/search-regex.ts [binary] [runs] [files]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { generateSearchTree, treeSize } from "./gen-tree.ts";
import { machineLine, median } from "../lib/machine.ts";
import { figure, printResult, type Figure } from "../lib/result.ts";
import { openServe, vmHwmKiB } from "../lib/serve-session.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const BIN = path.resolve(process.argv[2] ?? path.join(ROOT, "dist/serverfs-linux-x64"));
const RUNS = Number(process.argv[3] ?? 5);
const FILES = Number(process.argv[4] ?? 20_000);

interface Case {
  name: string;
  query: string;
  regex: boolean;
  rgArgs: string[];
  caseSensitive?: false;
}

const LISTED: Case[] = [
  { name: "literal (reference)", query: "zq-no-such-token-7781", regex: false, rgArgs: ["--fixed-strings", "--", "zq-no-such-token-7781"] },
  { name: "regex, required literal", query: "zq-no-such-token-\\d+", regex: true, rgArgs: ["-e", "zq-no-such-token-\\d+"] },
  { name: "regex, case_sensitive=false", query: "ZQ_NOSUCH\\w+", regex: true, caseSensitive: false, rgArgs: ["--ignore-case", "-e", "ZQ_NOSUCH\\w+"] },
  { name: "regex, inline (?i)", query: "(?i)ZQ_NOSUCH\\w+", regex: true, rgArgs: ["-e", "(?i)ZQ_NOSUCH\\w+"] },
  { name: "regex, classes only", query: "\\b[A-Z]{2}\\d{3}\\b", regex: true, rgArgs: ["-e", "\\b[A-Z]{2}\\d{3}\\b"] },
  { name: "regex, common literal", query: "^\\s*function\\s+\\d", regex: true, rgArgs: ["-e", "^\\s*function\\s+\\d"] },
  { name: "regex, heavy", query: "(\\w+\\s+){8}\\d", regex: true, rgArgs: ["-e", "(\\w+\\s+){8}\\d"] },
];

const SELECTED = process.env.REGEX_PATTERN;
const CASES: Case[] = SELECTED === undefined ? LISTED : [{ name: "regex, selected", query: SELECTED, regex: true, rgArgs: ["-e", SELECTED] }];

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no binary at ${BIN}: run bun build/compile.ts linux-x64`);
  const rg = Bun.which("rg");
  if (rg === null) throw new Error("ripgrep (rg) not installed: apt-get install -y ripgrep");
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-regex-"));
  const tree = process.env.SEARCH_TREE ?? path.join(base, "tree");
  const generated = process.env.SEARCH_TREE === undefined ? generateSearchTree(tree, { files: FILES }) : null;
  const stats = generated ?? treeSize(tree);
  const kinds = generated === null ? `the existing tree ${tree}` : `${generated.binary} binary, ${generated.invalidUtf8} with invalid UTF-8`;
  const toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(toml, `[limits]\nsearch_timeout_seconds = 600\n\n[[workdirs]]\nalias = "bench"\npath = ${JSON.stringify(tree)}\n`);
  console.log(machineLine());
  console.log(`binary: ${path.relative(ROOT, BIN)}; ${Bun.spawnSync([rg, "--version"]).stdout.toString().split("\n")[0]}`);
  console.log(`tree: ${stats.files} files, ${(stats.bytes / 1e6).toFixed(1)} MB (${kinds}); ${RUNS} interleaved runs each`);
  const rgBase = ["--no-messages", "--hidden", "--no-ignore", "--max-filesize", "52428800"];
  Bun.spawnSync([rg, ...rgBase, "--fixed-strings", "--", "warm-the-cache", tree]);
  const s = await openServe(BIN, toml, base, "bench-regex");
  const results: (Figure & { name: string; pattern: string })[] = [];
  try {
    const ours = async (c: Case): Promise<number> => {
      const t0 = performance.now();
      const r = await s.call("search_text", { workdir: "bench", query: c.query, regex: c.regex, case_sensitive: c.caseSensitive ?? true, limit: 100 });
      const ms = performance.now() - t0;
      const out = r.structuredContent as { returned?: number; code?: string };
      if (r.isError || out.returned !== 0) throw new Error(`${c.name}: unexpected answer ${JSON.stringify(out).slice(0, 200)}`);
      return ms;
    };
    const theirs = (c: Case): number => {
      const t0 = performance.now();
      const p = Bun.spawnSync([rg, ...rgBase, ...c.rgArgs, tree]);
      const ms = performance.now() - t0;
      if (p.exitCode !== 1) throw new Error(`${c.name}: rg exited ${p.exitCode}`);
      return ms;
    };
    console.log(`${"case".padEnd(26)} ${"pattern".padEnd(24)} ${"rg ms".padStart(8)} ${"serverfs ms".padStart(12)} ${"ratio".padStart(7)}`);
    for (const c of CASES) {
      await ours(c); // warm-up: JIT, the compiled program's DFA
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        a.push(theirs(c));
        b.push(await ours(c));
      }
      const ra = median(a);
      const rb = median(b);
      console.log(`${c.name.padEnd(26)} ${c.query.padEnd(24)} ${ra.toFixed(0).padStart(8)} ${rb.toFixed(0).padStart(12)} ${`${(rb / ra).toFixed(1)}x`.padStart(7)}`);
      results.push({ name: c.name, pattern: c.query, ...figure(rb, ra) });
    }
    printResult({ bench: "search-regex", runs: RUNS, files: stats.files, cases: results, peak_rss_kib: vmHwmKiB(s.pid) });
  } finally {
    await s.close();
    fs.rmSync(base, { recursive: true, force: true });
  }
}

await main();
