// edit_text_file's diff against the COMPILED serve over MCP stdio: for each costly case of
// bench/lib/diff-cases.ts (dry runs), how long the whole call takes and the longest the event
// loop stays held meanwhile, against a baseline measured in the same session: a one-line dry run
// of a 50-line file. The hold is seen from outside: pings are sent one after another while the
// edit runs, and the slowest ping is the longest stretch serve could answer nothing (it includes
// the edit's own reading and replacing, not only the diff). On a shared machine both are wall
// clock, so serve's CPU time for the call is printed too, from /proc: of its main thread (the
// event loop: what the edit held it for, whatever else ran) and of all its threads (with the
// collector's and the compiler's helpers). Cases run interleaved, run by run, in one serve; then
// each once more in a fresh serve ("cold": the first diff after start runs jsdiff before the
// engine has compiled it, the slowest it gets).
//
// usage: bun build/compile.ts linux-x64 && bun bench/fs/edit-diff.ts [runs=7] [binary]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildDiffTree, DIFF_CASES, type DiffCase } from "../lib/diff-cases.ts";
import { machineLine } from "../lib/machine.ts";
import { cpuNs, openServe, type ServeSession } from "../lib/serve-session.ts";

/** CPU time so far of serve's main thread, the one running the event loop (ns). */
const mainThreadNs = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]);

const ROOT = path.resolve(import.meta.dir, "../..");
const RUNS = Number(process.argv[2] ?? 7);
const BIN = path.resolve(process.argv[3] ?? path.join(ROOT, "dist/serverfs-linux-x64"));
const BASELINE: DiffCase = { name: "baseline: one-line dry run, 50-line file", file: "small.txt", edits: [{ old_text: "line 7\n", new_text: "line seven\n" }], dryRun: true };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One dry run: its latency, the slowest ping answered meanwhile, and whether the diff was cut. */
async function measure(s: ServeSession, c: DiffCase, revision: string): Promise<{ ms: number; hold: number; cpu: number; main: number; result: string }> {
  let done = false;
  let hold = 0;
  const pings = (async () => {
    while (!done) {
      const t = performance.now();
      await s.client.ping();
      hold = Math.max(hold, performance.now() - t);
    }
  })();
  const cpu0 = cpuNs(s.pid);
  const main0 = mainThreadNs(s.pid);
  const t0 = performance.now();
  const r = await s.call("edit_text_file", { workdir: "w", path: `diff/${c.file}`, expected_revision: revision, edits: c.edits, dry_run: true });
  const ms = performance.now() - t0;
  const cpu = (cpuNs(s.pid) - cpu0) / 1e6;
  const main = (mainThreadNs(s.pid) - main0) / 1e6;
  done = true;
  await pings;
  if (r.isError) throw new Error(`${c.name}: ${JSON.stringify(r.structuredContent)}`);
  return { ms, hold, cpu, main, result: (r.structuredContent as { diff_truncated: boolean }).diff_truncated ? "truncated" : "diff" };
}

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-diff-"));
  try {
    const dir = path.join(base, "w");
    buildDiffTree(path.join(dir, "diff"));
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(dir)}\nread_only = false\n`);
    console.log(machineLine());
    console.log(`binary: ${path.relative(ROOT, BIN)}; ${RUNS} interleaved runs of each dry run`);
    const cases = [BASELINE, ...DIFF_CASES.filter((c) => c.dryRun)];
    const revisionIn = async (s: ServeSession, c: DiffCase) => ((await s.call("stat_file", { workdir: "w", path: `diff/${c.file}` })).structuredContent as { revision: string }).revision;
    const cold = new Map<DiffCase, { ms: number; hold: number; cpu: number; main: number; result: string }>();
    for (const c of cases) {
      const fresh = await openServe(BIN, toml, base, "edit-diff-bench");
      try {
        cold.set(c, await measure(fresh, c, await revisionIn(fresh, c)));
      } finally {
        await fresh.close();
      }
    }
    const s = await openServe(BIN, toml, base, "edit-diff-bench");
    try {
      const revisions = new Map<string, string>();
      for (const c of cases) revisions.set(c.file, await revisionIn(s, c));
      const runs = new Map(cases.map((c) => [c, [] as { ms: number; hold: number; cpu: number; main: number; result: string }[]]));
      for (let r = 0; r < RUNS; r++) for (const c of cases) runs.get(c)!.push(await measure(s, c, revisions.get(c.file)!));
      const baseMs = median(runs.get(BASELINE)!.map((x) => x.ms));
      console.log("");
      console.log(`${"case".padEnd(46)} ${"result".padEnd(9)} ${"median ms".padStart(9)} ${"max ms".padStart(7)} ${"×base".padStart(6)} ${"max hold ms".padStart(11)} ${"main cpu med".padStart(12)} ${"max".padStart(6)} ${"all cpu".padStart(7)} | cold: ${"ms".padStart(6)} ${"hold".padStart(6)} ${"main".padStart(6)} ${"all".padStart(6)}`);
      for (const c of cases) {
        const xs = runs.get(c)!;
        const med = median(xs.map((x) => x.ms));
        const results = [...new Set(xs.map((x) => x.result))].join("/");
        console.log(
          `${c.name.padEnd(46)} ${results.padEnd(9)} ${med.toFixed(1).padStart(9)} ${Math.max(...xs.map((x) => x.ms)).toFixed(1).padStart(7)} ${(med / baseMs).toFixed(1).padStart(6)} ${Math.max(...xs.map((x) => x.hold)).toFixed(1).padStart(11)} ${median(xs.map((x) => x.main)).toFixed(1).padStart(12)} ${Math.max(...xs.map((x) => x.main)).toFixed(1).padStart(6)} ${median(xs.map((x) => x.cpu)).toFixed(1).padStart(7)} |       ${cold.get(c)!.ms.toFixed(1).padStart(6)} ${cold.get(c)!.hold.toFixed(1).padStart(6)} ${cold.get(c)!.main.toFixed(1).padStart(6)} ${cold.get(c)!.cpu.toFixed(1).padStart(6)}`,
        );
      }
    } finally {
      await s.close();
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

await main();
