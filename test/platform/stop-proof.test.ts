// The pieces the stop proof rests on, each on its own: the bracket of pids handed out during a
// listing, where this process's cgroup v2 lives, and a real task cgroup's life (born inside, found,
// killed as a whole, removed), including the guard that never lets the kill reach this process.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createPosixContainment } from "../../platform/posix/containment.ts";
import type { TaskGroup, TaskGroups } from "../../platform/posix/task-group.ts";
import { linuxStopProof } from "../../platform/linux/containment.ts";
import { createProcReader, emptyEnvironmentIsReal, environmentBounds, lastPidHandedOut, pidsBetween, readProcEntry } from "../../platform/linux/proc-reader.ts";
import { moveCost, ownCgroupDirectory, setUpTaskCgroups } from "../../platform/linux/task-cgroup.ts";
import { isLinux, isLive, procFacts, waitUntil } from "../support/proc.ts";
import { childEnv, uniqueRunId } from "./helpers.ts";

describe("pids handed out during a listing", () => {
  test("the range after `before` up to `after`, wrapping at pid_max, or null past the limit", () => {
    expect(pidsBetween(100, 100, 32768)).toEqual([]);
    expect(pidsBetween(100, 105, 32768)).toEqual([101, 102, 103, 104, 105]);
    // Linux wraps to 300 after pid_max - 1; starting again at 1 reads a few pids too many, never too few.
    const wrapped = pidsBetween(32765, 302, 32768)!;
    expect(wrapped.slice(0, 3)).toEqual([32766, 32767, 1]);
    expect(wrapped.at(-1)).toBe(302);
    expect(wrapped).toHaveLength(2 + 302);
    expect(pidsBetween(100, 100 + 4097, 4_194_304)).toBeNull();
    expect(pidsBetween(Number.NaN, 5, 32768)).toBeNull();
  });

  test.skipIf(!isLinux)("the last pid handed out is this pid namespace's: a just-orphaned child is at or below it, and listed (Linux)", () => {
    const before = lastPidHandedOut();
    const child = Bun.spawnSync(["sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo $!"], { stdout: "pipe" });
    const orphan = Number(child.stdout.toString().trim());
    try {
      const after = lastPidHandedOut();
      expect(pidsBetween(before, after)).toContain(orphan);
      expect(createProcReader().list().some((e) => e.pid === orphan)).toBe(true);
    } finally {
      process.kill(orphan, "SIGKILL");
    }
  });

  test.skipIf(!isLinux)("an empty environ is a real empty environment only between two reads of the same empty, laid-out range (Linux)", async () => {
    const own = environmentBounds(process.pid);
    expect(own).not.toBe("settled");
    if (own !== "settled") expect(own.end).toBeGreaterThan(own.start);
    // Gone: nothing to wait for.
    expect(environmentBounds(4_194_003)).toBe("settled");
    // `env -i` is a real empty environment, not a process between two programs.
    const empty = Bun.spawn(["env", "-i", "/bin/sleep", "1000"], { stdio: ["ignore", "ignore", "ignore"] });
    try {
      // Past its execve: the name changes before the new map's environment is laid out.
      const laidOut = () => {
        const b = environmentBounds(empty.pid);
        return b !== "settled" && b.start !== 0;
      };
      expect(await waitUntil(() => readFileSync(`/proc/${empty.pid}/comm`, "utf8").trim() === "sleep" && laidOut(), 5000)).toBe(true);
      expect(readFileSync(`/proc/${empty.pid}/environ`).length).toBe(0);
      const bounds = environmentBounds(empty.pid);
      expect(bounds).not.toBe("settled");
      if (bounds !== "settled") expect(bounds.start).toBe(bounds.end);
      expect(emptyEnvironmentIsReal(bounds, environmentBounds(empty.pid))).toBe(true);
      expect(createProcReader().markerOf(empty.pid, ["x"])).toBeNull();
    } finally {
      empty.kill("SIGKILL");
    }
    // An environ read empty while execve had installed a fresh map (bounds 0), or between bounds
    // that show a non-empty environment or two different maps, proves nothing: read it again.
    // (Recorded from a real race: the bounds read after the empty environ already showed the new
    // program's environment laid out, and "no marker" was remembered for a task's daemon.)
    expect(emptyEnvironmentIsReal({ start: 0, end: 0 }, { start: 0, end: 0 })).toBe(false);
    expect(emptyEnvironmentIsReal({ start: 0, end: 0 }, { start: 140736709794175, end: 140736709795817 })).toBe(false);
    expect(emptyEnvironmentIsReal({ start: 140736709794175, end: 140736709795817 }, { start: 140736709794175, end: 140736709795817 })).toBe(false);
    expect(emptyEnvironmentIsReal({ start: 140736709794175, end: 140736709794175 }, { start: 140736564046207, end: 140736564046207 })).toBe(false);
    expect(emptyEnvironmentIsReal({ start: 140736709794175, end: 140736709794175 }, { start: 140736709794175, end: 140736709794175 })).toBe(true);
    expect(emptyEnvironmentIsReal("settled", { start: 0, end: 0 })).toBe(true);
    expect(emptyEnvironmentIsReal({ start: 0, end: 0 }, "settled")).toBe(true);
  });
});

describe("where this process's cgroup v2 is", () => {
  const hybrid = [
    "24 23 0:21 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw,mode=755",
    "31 24 0:27 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer",
    "35 24 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  ].join("\n");
  test("hybrid and unified hosts, a container whose mount root is its own cgroup, escaped mount points", () => {
    expect(ownCgroupDirectory("6:freezer:/\n0::/\n", hybrid)).toBe("/sys/fs/cgroup/unified");
    expect(ownCgroupDirectory("0::/user.slice/user-1000.slice/user@1000.service/app.slice/b.service\n", "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw")).toBe(
      "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/b.service",
    );
    expect(ownCgroupDirectory("0::/docker/abc/inner\n", "40 30 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw")).toBe("/sys/fs/cgroup/inner");
    expect(ownCgroupDirectory("0::/docker/abc\n", "40 30 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw")).toBe("/sys/fs/cgroup");
    expect(ownCgroupDirectory("0::/a\n", "40 30 0:30 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw")).toBe("/mnt/my cgroups/a");
  });
  test("no cgroup v2 line, no cgroup2 mount, or a mount that does not cover our cgroup: none", () => {
    expect(ownCgroupDirectory("6:freezer:/\n", hybrid)).toBeNull();
    expect(ownCgroupDirectory("0::/\n", "31 24 0:27 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer")).toBeNull();
    expect(ownCgroupDirectory("0::/other\n", "40 30 0:30 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw")).toBeNull();
  });
});

describe("the probe's move cost, as the report words it", () => {
  test("a fast move is only measured; one that waited for the kernel says every task start waits so", () => {
    expect(moveCost(0.12)).toBe("the probe's move into a task cgroup and back took 0.1 ms");
    expect(moveCost(0.99)).toBe("the probe's move into a task cgroup and back took 1.0 ms");
    expect(moveCost(6.14)).toBe("the probe's move into a task cgroup and back took 6.1 ms, a wait every task start repeats (a cgroup2 mount with favordynmods has none)");
  });
});

const cgroupReason = isLinux ? linuxStopProof() : { path: "freeze", reason: "not Linux" };
describe.skipIf(cgroupReason.path !== "cgroup")(
  `a task cgroup, for real${cgroupReason.path !== "cgroup" ? ` (skipped: needs a writable cgroup v2 with cgroup.kill: ${cgroupReason.reason})` : ""}`,
  () => {
    const groups = () => setUpTaskCgroups().groups!;
    const ownCgroup = () => readFileSync("/proc/self/cgroup", "latin1").split("\n").find((l) => l.startsWith("0::"));

    test("the report names where the groups live and what the probe's move cost", () => {
      const { report } = setUpTaskCgroups();
      expect(report.path).toBe("cgroup");
      expect(report.reason).toMatch(/^one cgroup v2 per task under \/\S*serverfs; the probe's move into a task cgroup and back took \d+\.\d ms/);
    });

    test("a child is born inside; the group lists it, is killed as a whole, reads empty and is removed", async () => {
      const home = ownCgroup();
      const runId = uniqueRunId("cg");
      const group = groups().create(runId)!;
      const child = group.enter(() => Bun.spawn(["sh", "-c", "sleep 1000 & setsid sleep 1000 & wait"], { stdio: ["ignore", "ignore", "ignore"] }));
      expect(ownCgroup()).toBe(home);
      expect(await waitUntil(() => group.pids().length === 3, 5000)).toBe(true);
      const members = group.pids().map((pid) => ({ pid, start: procFacts(pid)!.startTime }));
      expect(group.populated()).toBe(true);
      expect(groups().find(runId)).not.toBeNull();
      // A second task with the same id while this one is populated gets no group: never shared.
      expect(groups().create(runId)).toBeNull();
      group.kill();
      await child.exited;
      expect(await waitUntil(() => !group.populated(), 5000)).toBe(true);
      for (const m of members) expect(isLive(m.pid, m.start)).toBe(false);
      expect(group.remove()).toBe(true);
      expect(groups().find(runId)).toBeNull();
      // Gone means empty: nothing can be born into a removed cgroup.
      expect(group.pids()).toEqual([]);
      expect(group.populated()).toBe(false);
    });

    test("the kill never reaches this process, even when asked while inside the group", () => {
      const home = ownCgroup();
      const group = groups().create(uniqueRunId("self"))!;
      group.enter(() => group.kill());
      expect(ownCgroup()).toBe(home);
      expect(group.remove()).toBe(true);
    });
  },
);

describe.skipIf(!isLinux)("a task whose group cannot be entered runs without one (Linux)", () => {
  test("the spawn falls back to freeze-first and the stop still proves zero survivors", async () => {
    let removed = 0;
    const refusing: TaskGroup = {
      enter: () => {
        throw Object.assign(new Error("EACCES"), { code: "EACCES" });
      },
      pids: () => [],
      populated: () => false,
      kill: () => undefined,
      remove: () => {
        removed++;
        return true;
      },
    };
    const groupsThatRefuse: TaskGroups = { create: () => refusing, find: () => null };
    const self = readProcEntry(process.pid)!;
    const c = createPosixContainment({
      reader: createProcReader(),
      ownGroups: [self.pgid, self.sid],
      startTimeOf: (pid) => readProcEntry(pid)?.startTime ?? null,
      taskGroups: groupsThatRefuse,
    });
    const p = await c.spawn({ argv: ["sh", "-c", "sleep 1000 & wait"], cwd: tmpdir(), env: childEnv(), runId: uniqueRunId("refused") });
    expect(removed).toBe(1);
    let members: number[] = [];
    for (let i = 0; i < 500 && members.length !== 2; i++) {
      members = await p.members();
      if (members.length !== 2) await Bun.sleep(10);
    }
    expect(members).toHaveLength(2);
    const evidence = await p.stop(100);
    expect(evidence).toMatchObject({ proved: true, survivors: [], proof: "freeze" });
  });
});
