// The glob matcher (src/fs/glob.ts) per name, against the anchored RegExp the same pattern compiles
// to, measured in the same run on the same names. Safe shapes only for the RegExp baseline; the
// pathological shapes are timed for ours alone (the RegExp would run for minutes) and report
// their work counter next to the (pattern + 1) x (name + 1) bound.
//
// usage: bun bench/fs/glob.ts

import { compileFnmatch, compileFnmatchSet, compilePathGlob, globWork } from "../../src/fs/glob.ts";
import { DEFAULT_DENY_GLOBS } from "../../src/fs/policy.ts";
import { machineLine, median } from "../lib/machine.ts";

const NAMES = Array.from({ length: 20_000 }, (_, i) => {
  const ext = ["rs", "ts", "md", "json", "txt"][i % 5] as string;
  return `${["f", "mod", "lib", "test_", "a"][i % 5]}${i % 997}_${i}.${ext}`;
});
const PATHS = NAMES.map((n, i) => `src/${["a", "b", "build", "docs"][i % 4]}/${i % 13}/${n}`);

function perName(test: (s: string) => boolean, subjects: string[]): number {
  const times: number[] = [];
  let hits = 0;
  for (let r = 0; r < 9; r++) {
    const t0 = performance.now();
    for (const s of subjects) if (test(s)) hits++;
    times.push(performance.now() - t0);
  }
  if (hits < 0) throw new Error("unreachable");
  return (median(times) * 1e6) / subjects.length;
}

function row(label: string, ours: number, regex: number): void {
  console.log(`${label.padEnd(34)} ours ${ours.toFixed(1).padStart(6)} ns/name   RegExp ${regex.toFixed(1).padStart(6)} ns/name   ratio ${(ours / regex).toFixed(2)}x`);
}

const esc = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
const fnRegex: Record<string, RegExp> = {
  "f7*.rs": /^f7[\s\S]*\.rs$/u,
  "*.md": /^[\s\S]*\.md$/u,
  "lib*": /^lib[\s\S]*$/u,
  "*_1*": /^[\s\S]*_1[\s\S]*$/u,
  "*[0-9].rs": /^[\s\S]*[0-9]\.rs$/u,
  "test_?*.ts": /^test_[\s\S][\s\S]*\.ts$/u,
};
const pathRegex: Record<string, RegExp> = {
  "docs/**": /^docs(?:\/[\s\S]*)?$/u,
  "**/build/**": /^(?:[^/]*\/)*build(?:\/[\s\S]*)?$/u,
  "src/*/1?/*.md": /^src\/[^/]*\/1[^/]\/[^/]*\.md$/u,
};

console.log(machineLine());
for (const [p, re] of Object.entries(fnRegex)) {
  const m = compileFnmatch(p);
  row(`fnmatch ${p}`, perName((s) => m.test(s), NAMES), perName((s) => re.test(s), NAMES));
}
for (const [p, re] of Object.entries(pathRegex)) {
  const m = compilePathGlob(p, true);
  row(`path ${p}`, perName((s) => m.test(s), PATHS), perName((s) => re.test(s), PATHS));
}
const set = compileFnmatchSet(DEFAULT_DENY_GLOBS) as { test(s: string): boolean };
const setRe = new RegExp(DEFAULT_DENY_GLOBS.map((g) => `(?:^${g.split("*").map(esc).join("[\\s\\S]*")}$)`).join("|"), "u");
row("built-in deny set (13 globs)", perName((s) => set.test(s), NAMES), perName((s) => setRe.test(s), NAMES));

console.log("pathological shapes (ours only):");
for (const [p, subject] of [
  ["*?*?*?*?*?*?*?*[b]", "a".repeat(255)],
  [`${"*?".repeat(510)}*[b]`, "a".repeat(255)],
  ["**/*?*?*?*?*?*?*?*[b]", `${"a/".repeat(500)}${"a".repeat(255)}`],
] as const) {
  const m = p.startsWith("**/") ? compilePathGlob(p) : compileFnmatch(p);
  const before = globWork.steps;
  const t0 = performance.now();
  const n = 50;
  for (let i = 0; i < n; i++) m.test(subject);
  const ms = (performance.now() - t0) / n;
  const steps = (globWork.steps - before) / n;
  const label = p.length > 24 ? `${p.slice(0, 24)}... (${p.length} chars)` : p;
  console.log(`  ${label.padEnd(40)} on ${String(subject.length).padStart(5)} chars: ${ms.toFixed(3)} ms, ${steps} steps (bound ${(p.length + 1) * (subject.length + 1)})`);
}
