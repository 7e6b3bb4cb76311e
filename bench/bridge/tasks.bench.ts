// 1,000 fake `complete:` tasks through a real `serverfs bridge` (each one a real contained provider
// process): sequential, then at max_active_tasks=16 across 16 workdirs; then the Bridge's own RSS
// while 16 tasks are active. Baseline for the task cost: spawning and reaping the same provider
// process directly, without the Bridge, in the same run; baseline for the RSS: the same Bridge
// freshly started, before any task. CANDIDATE=path/to/serverfs runs a compiled binary (as a user
// would) instead of this checkout's source. Target: Bridge RSS with 16 active tasks ≤ 80 MB.
import path from "node:path";
import { machine, rssMb, spawnBridge, summary } from "./common.ts";

const N = Number(process.env.N ?? 1000);
const CANDIDATE = process.env.CANDIDATE;
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);
type Client = Awaited<ReturnType<typeof spawnBridge>>["client"];

async function runOne(client: Client, workdir: string, i: number): Promise<number> {
  const t0 = performance.now();
  const { task_id } = await client.call("task.submit", { runtime: "fake", workdir, path: "", profile: "workspace-write", prompt: `complete:task ${i}` });
  for (;;) {
    const t = await client.call("task.get", { task_id, wait_seconds: 10 });
    if (TERMINAL.has(t.status as string)) {
      if (t.status !== "succeeded") throw new Error(`task ${i} ended ${String(t.status)} ${String(t.error_code)}`);
      return performance.now() - t0;
    }
  }
}

console.log(machine());

// Baseline: the provider process alone (spawn, start frame, result, exit), sequentially.
const providerPath = path.resolve(import.meta.dir, "../../src/runtimes/fake/provider.ts");
const base: number[] = [];
for (let i = 0; i < Math.min(N, 200); i++) {
  const t0 = performance.now();
  const p = Bun.spawn([process.execPath, providerPath], { stdin: "pipe", stdout: "pipe" });
  p.stdin.write(`${JSON.stringify({ type: "start", task_id: `t${i}`, prompt: "complete:x" })}\n`);
  await p.stdin.flush();
  const reader = p.stdout.getReader();
  let text = "";
  while (!text.includes('"result"')) text += new TextDecoder().decode((await reader.read()).value);
  p.stdin.end();
  await p.exited;
  base.push(performance.now() - t0);
}
console.log(summary("baseline: bare provider process round trip", base));

const seq = await spawnBridge(1, { max_active_tasks: 16 }, CANDIDATE);
const seqSamples: number[] = [];
const s0 = performance.now();
for (let i = 0; i < N; i++) seqSamples.push(await runOne(seq.client, "w0", i));
const seqSecs = (performance.now() - s0) / 1000;
await seq.stop();
console.log(summary(`sequential: ${N} tasks in ${seqSecs.toFixed(1)} s (${(N / seqSecs).toFixed(1)} tasks/s), submit→succeeded`, seqSamples));

const par = await spawnBridge(16, { max_active_tasks: 16 }, CANDIDATE);
const fresh = rssMb(par.pid);
const parSamples: number[] = [];
let next = 0;
const p0 = performance.now();
await Promise.all(
  Array.from({ length: 16 }, async (_, w) => {
    while (next < N) {
      const i = next++;
      parSamples.push(await runOne(par.client, `w${w}`, i));
    }
  }),
);
const parSecs = (performance.now() - p0) / 1000;
console.log(summary(`16 active: ${N} tasks in ${parSecs.toFixed(1)} s (${(N / parSecs).toFixed(1)} tasks/s), submit→succeeded`, parSamples));

// RSS of the Bridge process itself with 16 active tasks (providers are separate processes).
const idle = rssMb(par.pid);
const ids: string[] = [];
for (let w = 0; w < 16; w++) {
  ids.push((await par.client.call("task.submit", { runtime: "fake", workdir: `w${w}`, path: "", profile: "workspace-write", prompt: "wait:" })).task_id as string);
}
for (const id of ids) {
  for (let wait = 0; ; wait = 5) {
    const t = await par.client.call("task.get", { task_id: id, wait_seconds: wait });
    if (t.status === "running") break;
  }
}
await Bun.sleep(500);
const busy = rssMb(par.pid);
const active = (await par.client.call("bridge.status", {})).active_tasks;
console.log(`Bridge (${CANDIDATE ? CANDIDATE : "source"}) RSS: baseline ${fresh.toFixed(1)} MB freshly started; ${idle.toFixed(1)} MB after ${N} tasks idle; ${busy.toFixed(1)} MB with ${String(active)} active tasks (×${(busy / fresh).toFixed(2)} the baseline; target ≤ 80 MB: ${busy <= 80 ? "met" : "NOT met"})`);
for (const id of ids) await par.client.call("task.cancel", { task_id: id });
await par.stop();
