// The start-time shortcut of the marker scan: a look reads /proc/<pid>/environ only for processes
// born at or after the tick of the run's first leader (docs/platform.md, "Who belongs to a task").
// A process born in the same tick reads as not before it and must be read; one born a tick before
// cannot have inherited the marker. A later spawn of the same run keeps the first leader's tick,
// so it still finds what the first one left behind. Also: the two reads the stop no longer pays
// for (a repeated stop of a proved set, the whole table for adopted zombies).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { becomeSubreaper, containment } from "../../platform/index.ts";
import { createProcReader, ownChildren, readProcEntry, startTicksBefore } from "../../platform/linux/proc-reader.ts";
import { leaveLinuxSubreaper, reapAdopted } from "../../platform/linux/subreaper.ts";
import { createPosixContainment } from "../../platform/posix/containment.ts";
import { ContainmentSet, type EngineHooks } from "../../platform/posix/containment-set.ts";
import { MarkerBoundaries } from "../../platform/posix/marker-boundary.ts";
import type { ProcReader } from "../../platform/posix/process-table.ts";
import { eventually, isLinux, isLive, procFacts } from "../support/proc.ts";
import { childEnv, uniqueRunId } from "./helpers.ts";

describe("start ticks", () => {
  test("compared as numbers, strictly; equal ticks and anything but digits are never before", () => {
    expect(startTicksBefore("99", "100")).toBe(true);
    expect(startTicksBefore("100", "99")).toBe(false);
    expect(startTicksBefore("100", "100")).toBe(false);
    expect(startTicksBefore("", "100")).toBe(false);
    expect(startTicksBefore("1e3", "2000")).toBe(false);
    expect(startTicksBefore(" 12", "13")).toBe(false);
    expect(startTicksBefore("12", "-13")).toBe(false);
  });
});

describe("the boundary of a run's marker", () => {
  test("every set of a run gets its first leader's start until all of them are proved empty", () => {
    const b = new MarkerBoundaries();
    const first = b.open("r", "500");
    const second = b.open("r", "700");
    expect(second.since).toBe("500");
    first.close();
    // The first set is empty, but the second may still hold what its leader left: keep 500.
    expect(b.open("r", "900").since).toBe("500");
    expect(b.size).toBe(1);
  });

  test("a run forgotten once its last open set is proved empty starts afresh; close is idempotent", () => {
    const b = new MarkerBoundaries();
    const only = b.open("r", "500");
    only.close();
    only.close();
    expect(b.size).toBe(0);
    expect(b.open("r", "800").since).toBe("800");
    const other = b.open("s", "100");
    other.close();
    expect(b.size).toBe(1);
  });

  test("an unknown first start stays unknown for the run's later sets", () => {
    const b = new MarkerBoundaries();
    b.open("r", null);
    expect(b.open("r", "800").since).toBeNull();
  });
});

/** The real /proc reader, recording whose environment it read. */
function recordingReader(): { reader: ProcReader; environRead: Set<number> } {
  const real = createProcReader();
  const environRead = new Set<number>();
  return {
    environRead,
    reader: {
      ...real,
      markerOf(pid, markers) {
        environRead.add(pid);
        return real.markerOf(pid, markers);
      },
    },
  };
}

/** A process outside any task that carries `runId`'s marker, exec'd and settled. */
async function markedProcess(runId: string): Promise<{ pid: number; start: string; kill(): Promise<void> }> {
  const p = Bun.spawn(["sleep", "1000"], { env: { ...childEnv(), SERVERFS_RUN_ID: runId }, stdio: ["ignore", "ignore", "ignore"], detached: true });
  await eventually(() => {
    try {
      return readFileSync(`/proc/${p.pid}/environ`, "latin1").split("\0").includes(`SERVERFS_RUN_ID=${runId}`);
    } catch {
      return false;
    }
  });
  return {
    pid: p.pid,
    start: procFacts(p.pid)!.startTime,
    async kill() {
      p.kill("SIGKILL");
      await p.exited;
    },
  };
}

describe.skipIf(!isLinux)("markers are read only of processes born at or after the boundary tick (Linux, real processes)", () => {
  const hooks = (reader: ProcReader, spared: number[]): EngineHooks => {
    const self = readProcEntry(process.pid)!;
    return {
      reader,
      ownPid: process.pid,
      forbiddenGroups: new Set([0, 1, process.pid, self.pgid, self.sid]),
      // Bun spawned these and reaps them: never waitpid'd by the engine.
      bunChildren: new Set(spared),
      killPhaseMs: 2000,
    };
  };

  test("a marked process born in the boundary's own tick is read, found and killed with proof", async () => {
    const runId = uniqueRunId("tick");
    const marked = await markedProcess(runId);
    try {
      const { reader, environRead } = recordingReader();
      // The boundary is exactly its start tick: "not before", so it must be read.
      const set = new ContainmentSet(hooks(reader, [marked.pid]), { leader: null, markers: [runId], bornSince: marked.start });
      expect(set.livePids()).toEqual([marked.pid]);
      expect(environRead.has(marked.pid)).toBe(true);
      const evidence = await set.stop(0);
      expect(evidence).toMatchObject({ proved: true, survivors: [] });
      expect(isLive(marked.pid, marked.start)).toBe(false);
    } finally {
      await marked.kill();
    }
  });

  test("one born a tick before the boundary is never read: it cannot have inherited the marker", async () => {
    const runId = uniqueRunId("early");
    const marked = await markedProcess(runId);
    try {
      const { reader, environRead } = recordingReader();
      const set = new ContainmentSet(hooks(reader, [marked.pid]), { leader: null, markers: [runId], bornSince: String(Number(marked.start) + 1) });
      expect(set.livePids()).toEqual([]);
      expect(environRead.has(marked.pid)).toBe(false);
      // Without a boundary the same look reads it and finds it.
      const unbounded = new ContainmentSet(hooks(reader, [marked.pid]), { leader: null, markers: [runId] });
      expect(unbounded.livePids()).toEqual([marked.pid]);
      expect(environRead.has(marked.pid)).toBe(true);
    } finally {
      await marked.kill();
    }
  });

  test("a second spawn of the run finds, by its marker, a daemon the first left behind before the second leader was born", async () => {
    becomeSubreaper();
    const c = containment();
    const runId = uniqueRunId("second");
    const first = await c.spawn({ argv: ["sh", "-c", "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; wait"], cwd: tmpdir(), env: childEnv(), runId });
    const reader = first.stdout.getReader();
    let line = "";
    while (!line.includes("\n")) line += new TextDecoder().decode((await reader.read()).value);
    const daemon = Number(line.trim());
    await eventually(() => procFacts(daemon)?.sid === daemon);
    const daemonStart = procFacts(daemon)!.startTime;
    // Let the clock pass the daemon's tick, so the second leader is born strictly after it.
    for (;;) {
      const probe = Bun.spawn(["sleep", "1000"], { stdio: ["ignore", "ignore", "ignore"] });
      const probeStart = procFacts(probe.pid)!.startTime;
      probe.kill("SIGKILL");
      await probe.exited;
      if (startTicksBefore(daemonStart, probeStart)) break;
    }
    const second = await c.spawn({ argv: ["sleep", "1000"], cwd: tmpdir(), env: childEnv(), runId });
    try {
      expect(startTicksBefore(daemonStart, procFacts(second.pid)!.startTime)).toBe(true);
      // Another session and another tree: only the marker makes the first leader and its daemon
      // members of the second set, both born before its leader.
      expect(procFacts(daemon)!.sid).not.toBe(second.pid);
      expect((await second.members()).sort((a, b) => a - b)).toEqual([first.pid, second.pid, daemon].sort((a, b) => a - b));
      expect(await second.stop(0)).toMatchObject({ proved: true, survivors: [] });
      expect(isLive(daemon, daemonStart)).toBe(false);
    } finally {
      await second.stop(0);
      expect(await first.stop(0)).toMatchObject({ proved: true, survivors: [] });
      leaveLinuxSubreaper();
    }
  });
});

describe.skipIf(!isLinux)("what a proved stop no longer reads (Linux, real processes)", () => {
  beforeAll(() => {
    becomeSubreaper();
  });
  afterAll(() => {
    leaveLinuxSubreaper();
  });

  test("this process's children, adopted zombies included, come from every thread's children list", async () => {
    const out = Bun.spawnSync(["sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"], { stdout: "pipe" });
    const orphan = Number(out.stdout.toString().trim());
    try {
      await eventually(() => procFacts(orphan)?.ppid === process.pid);
      const fromTable = createProcReader()
        .list()
        .filter((e) => e.ppid === process.pid)
        .map((e) => e.pid);
      const listed = ownChildren()!;
      expect(fromTable).toContain(orphan);
      for (const pid of fromTable) expect(listed.map((e) => e.pid)).toContain(pid);
      process.kill(orphan, "SIGKILL");
      await eventually(() => procFacts(orphan)?.state === "Z");
      expect(ownChildren()!.find((e) => e.pid === orphan)?.zombie).toBe(true);
    } finally {
      reapAdopted(orphan);
    }
    expect(procFacts(orphan)).toBeNull();
  });

  test("a second stop of a set proved empty reads nothing and proves again", async () => {
    const real = createProcReader();
    let listings = 0;
    const reader: ProcReader = {
      ...real,
      list() {
        listings++;
        return real.list();
      },
    };
    const self = readProcEntry(process.pid)!;
    const c = createPosixContainment({ reader, ownGroups: [self.pgid, self.sid], startTimeOf: (pid) => readProcEntry(pid)?.startTime ?? null });
    const p = await c.spawn({ argv: ["sh", "-c", "sleep 1000 & wait"], cwd: tmpdir(), env: childEnv(), runId: uniqueRunId("again") });
    expect(await p.stop(0)).toMatchObject({ proved: true, survivors: [] });
    const after = listings;
    expect(await p.stop(0)).toMatchObject({ proved: true, survivors: [], method: "already-exited" });
    expect(listings).toBe(after);
  });
});
