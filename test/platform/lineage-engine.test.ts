// How the containment engine uses a reader's task lineage (macOS keeps one: platform/darwin/
// lineage.ts), shown with real processes on this machine's reader: a process lineage names a
// member is stopped with the task, and one it calls uncertain is never signalled and keeps the
// stop from being proved. The lineage view here is a stand-in for the macOS one, which needs xnu.
import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { createPosixContainment } from "../../platform/posix/containment.ts";
import type { ProcReader, TaskLineageView } from "../../platform/posix/process-table.ts";
import { createProcReader, readProcEntry } from "../../platform/linux/proc-reader.ts";
import { childEnv, uniqueRunId } from "./helpers.ts";

const isLinux = process.platform === "linux";

function containmentWith(lineage: (leader: number) => TaskLineageView) {
  const base = createProcReader();
  const reader: ProcReader = { ...base, list: () => base.list(), markerOf: (pid, m) => base.markerOf(pid, m), lineage };
  const self = readProcEntry(process.pid)!;
  return createPosixContainment({
    reader,
    ownGroups: [self.pgid, self.sid],
    startTimeOf: (pid) => readProcEntry(pid)?.startTime ?? null,
    killPhaseMs: 2000,
  });
}

/** A process outside every task: this test's own child, in this test's session. */
function bystander() {
  return Bun.spawn(["sleep", "1000"], { stdio: ["ignore", "ignore", "ignore"] });
}

describe.skipIf(!isLinux)("the engine and a task's lineage (Linux processes; the lineage is a stand-in)", () => {
  test("a process the lineage calls a member is stopped with the task, and the stop is proved", async () => {
    const outsider = bystander();
    let released = 0;
    const c = containmentWith(() => ({
      classify: (table) => ({ members: table.has(outsider.pid) ? [outsider.pid] : [], uncertain: [] }),
      release: () => released++,
    }));
    const task = await c.spawn({ argv: ["sleep", "1000"], cwd: tmpdir(), env: childEnv(), runId: uniqueRunId("lineage-member") });
    expect((await task.members()).sort()).toEqual([task.pid, outsider.pid].sort());
    const evidence = await task.stop(200);
    expect(evidence).toMatchObject({ proved: true, survivors: [] });
    expect(await outsider.exited).not.toBe(0);
    expect(outsider.signalCode).toBe("SIGTERM");
    expect(released).toBe(1);
  });

  test("a process the lineage calls uncertain is never signalled, and the stop is not proved while it lives", async () => {
    const outsider = bystander();
    try {
      let released = 0;
      const c = containmentWith(() => ({
        classify: (table) => ({ members: [], uncertain: table.has(outsider.pid) ? [outsider.pid] : [] }),
        release: () => released++,
      }));
      const task = await c.spawn({ argv: ["sleep", "1000"], cwd: tmpdir(), env: childEnv(), runId: uniqueRunId("lineage-uncertain") });
      expect(await task.members()).toEqual([task.pid]);
      const evidence = await task.stop(100);
      expect(evidence.proved).toBe(false);
      expect(evidence.survivors).toEqual([{ pid: outsider.pid, command: "sleep" }]);
      // The task itself is gone; the uncertain process was not touched.
      expect(readProcEntry(task.pid)?.zombie ?? true).toBe(true);
      expect(readProcEntry(outsider.pid)?.zombie).toBe(false);
      expect(outsider.killed).toBe(false);
      expect(released).toBe(0);
    } finally {
      outsider.kill("SIGKILL");
      await outsider.exited;
    }
  });
});
