// Crash recovery and the failure paths of stop: a SIGKILLed Bridge's leftovers are found by their
// marker and stopped with proof by a fresh process; a member that never goes away yields
// proved:false with the survivor listed; an unreadable process table never makes stop throw.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLinuxContainment } from "../../platform/linux/containment.ts";
import { createProcReader } from "../../platform/linux/proc-reader.ts";
import { MARKER_UNREADABLE, type ProcReader } from "../../platform/posix/process-table.ts";
import { isLinux, isLive, livePidsWithMarker, procFacts, readThroughNewline, waitUntil } from "../support/proc.ts";
import { childEnv, uniqueRunId } from "./helpers.ts";

const fixtures = join(import.meta.dir, "fixtures");


async function crashThenSweep(noSubreaper: boolean) {
  const runId = uniqueRunId(noSubreaper ? "crash-nosr" : "crash");
  const other = uniqueRunId("crash-other");
  const bridge = Bun.spawn(
    [process.execPath, join(fixtures, "bridge-like.ts"), runId, ...(noSubreaper ? ["--no-subreaper"] : [])],
    { stdout: "pipe", stderr: "inherit" },
  );
  const report = JSON.parse((await readThroughNewline(bridge.stdout)).split("\n")[0]!) as { subreaper: boolean; leader: number; members: number[] };
  expect(report.subreaper).toBe(!noSubreaper);
  expect(report.members.length).toBe(7);
  const recorded = report.members.map((pid) => ({ pid, start: procFacts(pid)!.startTime }));
  // A second, unrelated task with its own marker must survive the sweep of the first.
  const bystander = await createLinuxContainment().spawn({
    argv: ["sh", "-c", "sleep 1000 & wait"],
    cwd: tmpdir(),
    env: childEnv(),
    runId: other,
  });
  await waitUntil(() => livePidsWithMarker(other).length === 2, 5000);

  bridge.kill("SIGKILL");
  await bridge.exited;
  // Everything but nothing is supervised now: the leftovers live on.
  expect(livePidsWithMarker(runId).length).toBe(7);

  const sweeper = Bun.spawn([process.execPath, join(fixtures, "sweeper.ts"), "100", runId], { stdout: "pipe" });
  const result = JSON.parse((await readThroughNewline(sweeper.stdout)).split("\n")[0]!);
  await sweeper.exited;
  expect(result.found).toBe(7);
  expect(result.evidence.proved).toBe(true);
  expect(result.evidence.survivors).toEqual([]);
  expect(livePidsWithMarker(runId)).toEqual([]);
  for (const r of recorded) expect(isLive(r.pid, r.start)).toBe(false);

  expect(livePidsWithMarker(other).length).toBe(2);
  expect((await bystander.stop(100)).proved).toBe(true);
}

describe.skipIf(!isLinux)("recovery and failure paths (Linux)", () => {
  test("after a subreaper Bridge is SIGKILLed, a fresh process sweeps every leftover by marker, with proof", async () => {
    await crashThenSweep(false);
  });

  test("same without a subreaper (weaker mode: orphans went to init, still found by marker)", async () => {
    await crashThenSweep(true);
  });

  test("sweep of markers nobody carries finds nothing and proves it; invalid markers are ignored", async () => {
    const result = await createLinuxContainment().sweep([uniqueRunId("nobody"), "bad marker\n", ""], 50);
    expect(result.found).toBe(0);
    expect(result.evidence.proved).toBe(true);
    expect(result.evidence.method).toBe("already-exited");
  });

  test("a member that keeps being reported yields proved:false with that survivor listed", async () => {
    const real = createProcReader();
    let leaderPid = 0;
    const PHANTOM = 4_194_000; // above any pid this VM hands out; kill() on it is ESRCH
    const reader: ProcReader = {
      list: () => {
        const rows = real.list();
        if (leaderPid !== 0) {
          rows.push({ pid: PHANTOM, ppid: leaderPid, pgid: leaderPid, sid: leaderPid, zombie: false, stopped: false, threads: 1, blocked: false, startTime: "1", command: "phantom" });
        }
        return rows;
      },
      markerOf: (pid, markers) => real.markerOf(pid, markers),
    };
    const c = createLinuxContainment({ procReader: reader, killPhaseMs: 150 });
    const runId = uniqueRunId("phantom");
    const p = await c.spawn({ argv: ["sh", "-c", "sleep 1000 & wait"], cwd: tmpdir(), env: childEnv(), runId });
    leaderPid = p.pid;
    await waitUntil(() => livePidsWithMarker(runId).length === 2, 5000);
    expect(await p.members()).toContain(PHANTOM);
    const evidence = await p.stop(30);
    expect(evidence.proved).toBe(false);
    expect(evidence.method).toBe("kill");
    expect(evidence.survivors).toEqual([{ pid: PHANTOM, command: "phantom" }]);
    expect(evidence.elapsedMs).toBeGreaterThanOrEqual(150);
    // The real members were still killed.
    expect(livePidsWithMarker(runId)).toEqual([]);
  });

  test("an unreadable process table never makes stop throw: it reports proved:false", async () => {
    let broken = false;
    const real = createProcReader();
    const reader: ProcReader = {
      list: () => {
        if (broken) throw new Error("EACCES /proc");
        return real.list();
      },
      markerOf: (pid, markers) => real.markerOf(pid, markers),
    };
    const c = createLinuxContainment({ procReader: reader, killPhaseMs: 100 });
    const runId = uniqueRunId("broken");
    const p = await c.spawn({ argv: ["sleep", "1000"], cwd: tmpdir(), env: childEnv(), runId });
    broken = true;
    const evidence = await p.stop(10);
    expect(evidence.proved).toBe(false);
    await expect(p.members()).rejects.toMatchObject({ code: "IO_ERROR" });
    broken = false;
    const second = await p.stop(10);
    expect(second.proved).toBe(true);
    expect(livePidsWithMarker(runId)).toEqual([]);
  });

  test("a process whose marker cannot be read is never proved gone, and is not signalled", async () => {
    // What macOS does for a SIP-restricted binary whose environment KERN_PROCARGS2 hides: the
    // reader says MARKER_UNREADABLE. It may be an escaped member, so no stop or sweep is proved.
    const hidden = Bun.spawn(["sleep", "1000"], { stdio: ["ignore", "ignore", "ignore"] });
    let blind = true;
    const real = createProcReader();
    const reader: ProcReader = {
      list: () => real.list(),
      markerOf: (pid, markers) => (blind && pid === hidden.pid ? MARKER_UNREADABLE : real.markerOf(pid, markers)),
    };
    try {
      const c = createLinuxContainment({ procReader: reader, killPhaseMs: 100 });
      const runId = uniqueRunId("unreadable");
      const p = await c.spawn({ argv: ["sh", "-c", "sleep 1000 & wait"], cwd: tmpdir(), env: childEnv(), runId });
      await waitUntil(() => livePidsWithMarker(runId).length === 2, 5000);
      expect((await p.members()).length).toBe(2);
      const evidence = await p.stop(30);
      expect(evidence.proved).toBe(false);
      expect(evidence.survivors).toEqual([{ pid: hidden.pid, command: "sleep" }]);
      expect(livePidsWithMarker(runId)).toEqual([]);
      expect(isLive(hidden.pid)).toBe(true);
      const swept = await c.sweep([runId], 10);
      expect(swept.evidence.proved).toBe(false);
      blind = false;
      expect((await p.stop(10)).proved).toBe(true);
      expect((await c.sweep([runId], 10)).evidence.proved).toBe(true);
      expect(isLive(hidden.pid)).toBe(true);
    } finally {
      hidden.kill("SIGKILL");
      await hidden.exited;
    }
  });

  test("concurrent stop calls share one stop; a stopped set stays empty", async () => {
    const runId = uniqueRunId("twice");
    const p = await createLinuxContainment().spawn({ argv: ["sh", "-c", "sleep 1000 & wait"], cwd: tmpdir(), env: childEnv(), runId });
    await waitUntil(() => livePidsWithMarker(runId).length === 2, 5000);
    const [a, b] = await Promise.all([p.stop(200), p.stop(200)]);
    expect(a).toBe(b);
    expect(a.proved).toBe(true);
    const again = await p.stop(200);
    expect(again).toMatchObject({ proved: true, method: "already-exited" });
  });
});

describe.skipIf(!isLinux)("pid reuse guard (Linux)", () => {
  test("a remembered member whose pid now names a different process (other start time) is never signalled", async () => {
    // An unrelated process, not contained, no marker.
    const unrelated = Bun.spawn(["sleep", "1000"], { stdio: ["ignore", "ignore", "ignore"] });
    await waitUntil(() => procFacts(unrelated.pid) !== null, 2000);
    const realStart = procFacts(unrelated.pid)!.startTime;
    const real = createProcReader();
    let leaderPid = 0;
    let pretend = true;
    // While `pretend` is on, the unrelated pid is reported as a child of our leader with an older
    // start time: exactly what a dead member whose pid was then reused looks like to the set.
    const reader: ProcReader = {
      list: () =>
        real.list().map((e) =>
          pretend && e.pid === unrelated.pid && leaderPid !== 0
            ? { ...e, ppid: leaderPid, startTime: String(Number(realStart) - 1) }
            : e,
        ),
      markerOf: (pid, markers) => real.markerOf(pid, markers),
    };
    const c = createLinuxContainment({ procReader: reader, killPhaseMs: 300 });
    const runId = uniqueRunId("reuse");
    const p = await c.spawn({ argv: ["sleep", "1000"], cwd: tmpdir(), env: childEnv(), runId });
    leaderPid = p.pid;
    expect(await p.members()).toContain(unrelated.pid);
    pretend = false;
    expect(await p.members()).not.toContain(unrelated.pid);
    const evidence = await p.stop(50);
    expect(evidence.proved).toBe(true);
    expect(isLive(unrelated.pid, realStart)).toBe(true);
    unrelated.kill("SIGKILL");
    await unrelated.exited;
  });
});

describe.skipIf(!isLinux)("independence of tasks (Linux)", () => {
  test("stopping one task leaves another task's whole tree, escapees included, untouched", async () => {
    const c = createLinuxContainment();
    const shape = ["sh", "-c", "sleep 1000 & setsid sleep 1000 & setsid -f sleep 1000; wait"];
    const a = await c.spawn({ argv: shape, cwd: tmpdir(), env: childEnv(), runId: uniqueRunId("indep-a") });
    const b = await c.spawn({ argv: shape, cwd: tmpdir(), env: childEnv(), runId: uniqueRunId("indep-b") });
    // Ready when each tree is sh + 3 sleeps (the transient `setsid -f` parent has exited).
    const settled = (runId: string) => {
      const pids = livePidsWithMarker(runId);
      const comm = (pid: number) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
        } catch {
          return "";
        }
      };
      const sleeps = pids.filter((pid) => comm(pid) === "sleep");
      return pids.length === 4 && sleeps.length === 3;
    };
    expect(await waitUntil(() => settled(a.runId) && settled(b.runId), 5000)).toBe(true);
    const bMembers = (await b.members()).map((pid) => ({ pid, start: procFacts(pid)!.startTime }));
    expect(bMembers.length).toBe(4);
    expect((await a.stop(200)).proved).toBe(true);
    expect(livePidsWithMarker(a.runId)).toEqual([]);
    for (const m of bMembers) expect(isLive(m.pid, m.start)).toBe(true);
    expect((await b.members()).sort()).toEqual(bMembers.map((m) => m.pid).sort());
    expect((await b.stop(200)).proved).toBe(true);
  });
});
