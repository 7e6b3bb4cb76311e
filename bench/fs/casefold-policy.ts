// The walk's per-entry policy test (PathPolicy.entryVisible) on a case-insensitive workdir vs a
// case-sensitive one, over 200,000 names shaped like a source tree (mostly lower-case ASCII,
// some mixed case, a few non-ASCII), with the built-in deny list plus one slash glob. Runs are
// interleaved; the ratio is what folding costs the hot path of list, find and search.
//
// usage: bun bench/fs/casefold-policy.ts [runs]
import { machineLine, median } from "../lib/machine.ts";
import { PathPolicy } from "../../src/fs/policy.ts";

const N = 200_000;
const names: string[] = [];
const parents: string[] = [];
for (let i = 0; i < N; i++) {
  const kind = i % 50;
  const stem = kind < 39 ? `file_${i}.rs` : kind < 49 ? `Module${i}.Java` : `r\u00e9sum\u00e9_${i}.md`;
  names.push(stem);
  parents.push(`src/pkg${Math.floor(i / 500)}`); // 500 entries per directory, as a walk sees them
}

const policy = { allow_hidden: false, disable_default_deny: false, extra_deny_globs: ["secrets/**"] };
const sensitive = new PathPolicy(policy, { caseInsensitive: false });
const insensitive = new PathPolicy(policy, { caseInsensitive: true });

function pass(p: PathPolicy): { ms: number; visible: number } {
  const t0 = performance.now();
  let visible = 0;
  for (let i = 0; i < N; i++) if (p.entryVisible(parents[i] as string, names[i] as string)) visible++;
  return { ms: performance.now() - t0, visible };
}

const runs = Number(process.argv[2] ?? 15);
console.log(machineLine());
pass(sensitive);
pass(insensitive);
const a: number[] = [];
const b: number[] = [];
for (let r = 0; r < runs; r++) {
  const s = pass(sensitive);
  const c = pass(insensitive);
  if (s.visible !== N || c.visible !== N) throw new Error("every generated name should be visible");
  a.push(s.ms);
  b.push(c.ms);
}
const ms = median(a);
const mi = median(b);
console.log(`entryVisible x ${N}: case-sensitive ${ms.toFixed(1)} ms, case-insensitive ${mi.toFixed(1)} ms (median of ${runs})`);
console.log(`ratio insensitive/sensitive: ${(mi / ms).toFixed(2)}; per entry +${(((mi - ms) * 1e6) / N).toFixed(0)} ns`);
