// The Bridge process's own RSS (providers are separate processes) with 16 active tasks, as a user
// runs it: the compiled binary. Per round, on a fresh Bridge over 16 workdirs: RSS freshly started
// (the baseline), with 16 running `wait:` tasks, then again with 16 running after CHURN completed
// tasks. BASELINE=path/to/serverfs (e.g. the previous commit compiled) is measured in the same
// run, alternating with the candidate, so load drift hits both alike.
// Target: ≤ 80 MB with 16 active tasks.
// RSS includes the executable's own code pages, mapped from the page cache, and how many of them
// a fault maps in depends on how the file came into the cache (a freshly written or copied binary
// sits in large folios and showed ~5 MB more than the same bytes read back from disk). So the
// after-churn figure is also printed split into anonymous memory and file pages, and binaries are
// best compared after `echo 3 > /proc/sys/vm/drop_caches` (root), as they would be after a reboot.
// Last line: RESULT {"bench":"bridge-rss","rounds","churn","fresh_mib","active_mib",
//   "after_churn_mib","peak_rss_kib"} for the candidate (medians of VmRSS; peak_rss_kib is the
//   highest VmHWM any of its Bridges reached), for bench/targets.ts.
//
// usage: [CANDIDATE=dist/serverfs-linux-x64] [BASELINE=...] [ROUNDS=3] [CHURN=200] bun bench/bridge/rss.bench.ts
import path from "node:path";
import { machineLine, median } from "../lib/machine.ts";
import { printResult } from "../lib/result.ts";
import { vmHwmKiB } from "../lib/serve-session.ts";
import { rssMb, rssSplitMb, spawnBridge, type BridgeProc } from "./common.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const CANDIDATE = process.env.CANDIDATE ?? path.join(ROOT, "dist", `serverfs-${process.platform}-${process.arch}`);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CHURN = Number(process.env.CHURN ?? 200);
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

async function until(b: BridgeProc, id: string, pred: (status: string) => boolean): Promise<string> {
  for (let wait = 0; ; wait = 5) {
    const t = await b.client.call("task.get", { task_id: id, wait_seconds: wait });
    if (pred(t.status as string)) return t.status as string;
  }
}

/** RSS with 16 `wait:` tasks running (one per workdir), then cancel them all. */
async function sixteenActive(b: BridgeProc, split?: { anon: number; file: number }[]): Promise<number> {
  const ids: string[] = [];
  for (let w = 0; w < 16; w++) {
    ids.push((await b.client.call("task.submit", { runtime: "fake", workdir: `w${w}`, path: "", profile: "workspace-write", prompt: "wait:" })).task_id as string);
  }
  for (const id of ids) await until(b, id, (s) => s === "running");
  const active = (await b.client.call("bridge.status", {})).active_tasks;
  if (active !== 16) throw new Error(`expected 16 active tasks, saw ${String(active)}`);
  await Bun.sleep(500);
  const rss = rssMb(b.pid);
  split?.push(rssSplitMb(b.pid));
  for (const id of ids) await b.client.call("task.cancel", { task_id: id });
  return rss;
}

async function churn(b: BridgeProc, n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, w) => {
      while (next < n) {
        const i = next++;
        const { task_id } = await b.client.call("task.submit", { runtime: "fake", workdir: `w${w}`, path: "", profile: "workspace-write", prompt: `complete:task ${i}` });
        const status = await until(b, task_id as string, (s) => TERMINAL.has(s));
        if (status !== "succeeded") throw new Error(`churn task ended ${status}`);
      }
    }),
  );
}

type Sample = { fresh: number; active: number; afterChurn: number; anon: number; file: number; hwmKiB: number };
const sides = [{ label: "candidate", binary: CANDIDATE }];
if (process.env.BASELINE) sides.push({ label: "baseline ", binary: process.env.BASELINE });
const samples = new Map(sides.map((s) => [s.label, [] as Sample[]]));
for (let round = 0; round < ROUNDS; round++) {
  for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
    const b = await spawnBridge(16, { max_active_tasks: 16 }, side.binary);
    try {
      await Bun.sleep(300);
      const fresh = rssMb(b.pid);
      const active = await sixteenActive(b);
      await churn(b, CHURN);
      const split: { anon: number; file: number }[] = [];
      const afterChurn = await sixteenActive(b, split);
      samples.get(side.label)!.push({ fresh, active, afterChurn, anon: split[0]!.anon, file: split[0]!.file, hwmKiB: vmHwmKiB(b.pid) });
    } finally {
      await b.stop();
    }
  }
}

console.log(machineLine());
console.log(`rounds: ${ROUNDS} (alternating), churn: ${CHURN} completed tasks between the two 16-active samples`);
for (const side of sides) {
  const s = samples.get(side.label)!;
  const m = (k: keyof Sample) => median(s.map((x) => x[k]));
  console.log(
    `${side.label} ${path.relative(ROOT, side.binary) || side.binary}: median RSS fresh ${m("fresh").toFixed(1)} MB (baseline), ` +
      `16 active ${m("active").toFixed(1)} MB (+${(m("active") - m("fresh")).toFixed(1)}), ` +
      `16 active after churn ${m("afterChurn").toFixed(1)} MB (+${(m("afterChurn") - m("fresh")).toFixed(1)}; anonymous ${m("anon").toFixed(1)} + file pages ${m("file").toFixed(1)}); ` +
      `target ≤ 80 MB: ${Math.max(m("active"), m("afterChurn")) <= 80 ? "met" : "NOT met"}`,
  );
}
const candidate = samples.get("candidate")!;
const med = (k: keyof Sample) => Math.round(median(candidate.map((x) => x[k])) * 10) / 10;
printResult({
  bench: "bridge-rss",
  rounds: ROUNDS,
  churn: CHURN,
  fresh_mib: med("fresh"),
  active_mib: med("active"),
  after_churn_mib: med("afterChurn"),
  peak_rss_kib: Math.max(...candidate.map((x) => x.hwmKiB)),
});
