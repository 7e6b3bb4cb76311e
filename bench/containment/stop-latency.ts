// Stop latency for a 50-process tree with escapees, versus the naive baseline, in one run.
//
//   contained: containment().spawn of sh -> 7 sh -> 6 leaves each, every leaf `setsid sleep` (42
//              processes in their own sessions, which kill(-pgid) cannot reach); stop(grace)
//              until proved (TERM path), and stop(0) (straight to KILL). Once with the proof this
//              host gives the Bridge (a cgroup per task where this process may make one) and once
//              freeze-first (SERVERFS_TASK_CGROUP=off's path), interleaved.
//   baseline:  Bun.spawn({detached}) of the same tree WITHOUT setsid (all 50 in one group);
//              process.kill(-pgid, SIGTERM), then poll kill(-pgid, 0) until ESRCH. Also reported:
//              when /proc first shows no live (non-zombie) member of the group, because ESRCH
//              waits for PID 1 to reap the orphans, which is slow on some hosts.
//
// Usage: bun bench/containment/stop-latency.ts [runs=30]
import { cpus, release, totalmem } from "node:os";
import { readdirSync, readFileSync } from "node:fs";
import { becomeSubreaper, stopProof } from "../../platform/index.ts";
import { createLinuxContainment } from "../../platform/linux/containment.ts";
import type { Containment } from "../../platform/types.ts";
import { nestedTree } from "../../test/platform/shapes.ts";

const RUNS = Number(process.argv[2] ?? 30);
const TREE = 50;

function groupMembers(pgid: number): { live: number; any: number } {
  let live = 0;
  let any = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      any++;
      if (fields[0] !== "Z") live++;
    } catch {
      // gone
    }
  }
  return { live, any };
}

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return `median ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms (n=${sorted.length})`;
}

async function baselineOnce(): Promise<{ esrch: number; noLive: number }> {
  const child = Bun.spawn(nestedTree(7, 6), { detached: true, stdio: ["ignore", "ignore", "ignore"] });
  const pgid = child.pid;
  while (groupMembers(pgid).live < TREE) await Bun.sleep(2);
  const t0 = performance.now();
  process.kill(-pgid, "SIGTERM");
  let noLive = -1;
  for (;;) {
    if (noLive < 0 && groupMembers(pgid).live === 0) noLive = performance.now() - t0;
    try {
      process.kill(-pgid, 0);
    } catch {
      break;
    }
    if (performance.now() - t0 > 10_000) break;
    await Bun.sleep(1);
  }
  const esrch = performance.now() - t0;
  if (noLive < 0) noLive = esrch;
  await child.exited;
  return { esrch, noLive };
}

async function containedOnce(c: Containment, graceMs: number, index: number): Promise<{ ms: number; proved: boolean; escapees: number }> {
  const p = await c.spawn({
    argv: nestedTree(7, 6, true),
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    runId: `bench-${process.pid}-${graceMs}-${index}-${Math.random().toString(36).slice(2, 8)}`,
  });
  let members = await p.members();
  while (members.length < TREE) {
    await Bun.sleep(2);
    members = await p.members();
  }
  const escapees = members.filter((pid) => {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[3]) !== p.pid;
  }).length;
  const evidence = await p.stop(graceMs);
  return { ms: evidence.elapsedMs, proved: evidence.proved, escapees };
}

if (process.platform !== "linux") {
  console.error("this benchmark reads /proc and runs on Linux only");
  process.exit(2);
}

console.log(`machine: ${cpus()[0]?.model ?? "?"} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Linux ${release()}, bun ${Bun.version}`);
console.log(`tree: ${TREE} processes; runs: ${RUNS}`);

// Baseline first: it must run before this process becomes a subreaper, or the orphans would be
// re-parented to us (and never reaped by Bun) instead of PID 1.
const esrch: number[] = [];
const noLive: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const r = await baselineOnce();
  esrch.push(r.esrch);
  noLive.push(r.noLive);
}

becomeSubreaper();
const modes: Array<{ name: string; c: Containment }> = [{ name: `host proof (${stopProof().path})`, c: createLinuxContainment() }];
if (stopProof().path !== "freeze") modes.push({ name: "freeze-first", c: createLinuxContainment({ taskCgroups: "off" }) });
const results = modes.map(() => ({ term: [] as number[], kill: [] as number[], unproved: 0, escapees: 0 }));
for (let i = 0; i < RUNS; i++) {
  for (const [m, mode] of modes.entries()) {
    const a = await containedOnce(mode.c, 2000, i);
    const b = await containedOnce(mode.c, 0, i);
    const r = results[m]!;
    r.term.push(a.ms);
    r.kill.push(b.ms);
    if (!a.proved || !b.proved) r.unproved++;
    r.escapees = Math.max(r.escapees, a.escapees, b.escapees);
  }
}

console.log(`stop proof of this host: ${stopProof().path} (${stopProof().reason})`);
console.log(`baseline kill(-pgid) TERM, same-group tree, until ESRCH:      ${stats(esrch)}`);
console.log(`baseline kill(-pgid) TERM, same-group tree, until no live:    ${stats(noLive)}`);
for (const [m, mode] of modes.entries()) {
  const r = results[m]!;
  console.log(`${mode.name}: stop(2000), ${r.escapees} setsid escapees, proved:  ${stats(r.term)}`);
  console.log(`${mode.name}: stop(0) (KILL at once), proved:             ${stats(r.kill)}`);
  console.log(`${mode.name}: runs without proof: ${r.unproved}`);
}
