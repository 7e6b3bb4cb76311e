// One cgroup v2 per task, where this process may make them: as root, or inside a delegated
// subtree (a systemd unit with Delegate=yes, `systemd-run --user --scope -p Delegate=yes`).
//
// Layout: <own cgroup>/serverfs/<run id>. A child is born in its parent's cgroup, and Bun.spawn
// cannot start a child in another one (that takes clone3's CLONE_INTO_CGROUP), so this process
// moves itself into the task's cgroup, spawns, and moves back: the spawn is synchronous, so
// nothing else is born while it is there. Both moves need write access to the cgroup.procs of
// the common ancestor, our own cgroup, which is exactly what delegation grants. The cgroup needs
// no controller: cgroup.procs, cgroup.events and cgroup.kill (Linux 5.14) are core files.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmdirSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { TaskGroup, TaskGroups } from "../posix/task-group.ts";
import type { StopProofReport } from "../types.ts";

const PARENT_NAME = "serverfs";

export interface CgroupSetup {
  groups: TaskGroups | null;
  report: StopProofReport;
}

/** Decode a mountinfo path field (space, tab, newline and backslash are octal-escaped). */
function unescapeMountPath(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * Where this process's own cgroup v2 directory is, from the "0::" line of /proc/self/cgroup and
 * a cgroup2 mount in /proc/self/mountinfo whose root covers it. Exported for tests.
 */
export function ownCgroupDirectory(selfCgroup: string, mountinfo: string): string | null {
  const line = selfCgroup.split("\n").find((l) => l.startsWith("0::"));
  if (line === undefined) return null;
  const own = line.slice(3);
  for (const row of mountinfo.split("\n")) {
    const dash = row.indexOf(" - ");
    if (dash === -1) continue;
    const after = row.slice(dash + 3).split(" ");
    if (after[0] !== "cgroup2") continue;
    const fields = row.slice(0, dash).split(" ");
    const root = unescapeMountPath(fields[3] ?? "");
    const mountPoint = unescapeMountPath(fields[4] ?? "");
    if (root === "" || mountPoint === "") continue;
    const rest = root === "/" ? own : own === root ? "" : own.startsWith(`${root}/`) ? own.slice(root.length) : null;
    if (rest === null) continue;
    return rest === "" || rest === "/" ? mountPoint : join(mountPoint, rest);
  }
  return null;
}

function writeText(file: string, text: string): void {
  const fd = openSync(file, "w");
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

function code(err: unknown): string {
  const c = (err as { code?: unknown })?.code;
  return typeof c === "string" ? c : "an error";
}

class Cgroup implements TaskGroup {
  constructor(
    readonly dir: string,
    private readonly home: string,
  ) {}

  enter<T>(spawn: () => T): T {
    writeText(join(this.dir, "cgroup.procs"), String(process.pid));
    try {
      return spawn();
    } finally {
      this.leave();
    }
  }

  private leave(): void {
    // Staying behind would put this process in the task's group, and its kill would kill us.
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        writeText(join(this.home, "cgroup.procs"), String(process.pid));
        return;
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  }

  // A cgroup that is gone was removed empty (the kernel refuses to remove a populated one), and
  // nothing can be born into a removed cgroup: it reads as empty.
  pids(): number[] {
    const out: number[] = [];
    const walk = (dir: string) => {
      for (const line of readFileSync(join(dir, "cgroup.procs"), "latin1").split("\n")) {
        if (line !== "") out.push(Number(line));
      }
      for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) walk(join(dir, entry.name));
    };
    try {
      walk(this.dir);
    } catch (err) {
      if (code(err) !== "ENOENT") throw err;
    }
    return out;
  }

  populated(): boolean {
    let events: string;
    try {
      events = readFileSync(join(this.dir, "cgroup.events"), "latin1");
    } catch (err) {
      if (code(err) === "ENOENT") return false;
      throw err;
    }
    const match = /^populated (\d)$/m.exec(events);
    if (match === null) throw new Error("cgroup.events has no populated line");
    return match[1] !== "0";
  }

  kill(): void {
    if (this.pids().includes(process.pid)) this.leave();
    if (this.pids().includes(process.pid)) throw new Error("this process is inside the task's cgroup");
    writeText(join(this.dir, "cgroup.kill"), "1");
  }

  remove(): boolean {
    const removeTree = (dir: string): boolean => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory() && !removeTree(join(dir, entry.name))) return false;
      }
      try {
        rmdirSync(dir);
        return true;
      } catch (err) {
        return code(err) === "ENOENT";
      }
    };
    try {
      return removeTree(this.dir);
    } catch (err) {
      return code(err) === "ENOENT";
    }
  }
}

/** Run ids are [A-Za-z0-9._-] (RUN_ID_PATTERN), so they are safe cgroup names as they are. */
function groupsUnder(parent: string, home: string): TaskGroups {
  return {
    create(runId: string): TaskGroup | null {
      const dir = join(parent, runId);
      try {
        mkdirSync(dir);
      } catch (err) {
        if (code(err) !== "EEXIST") return null;
        // Left by an earlier run of the same id: its processes must not join this task's proof.
        try {
          if (new Cgroup(dir, home).populated()) return null;
        } catch {
          return null;
        }
      }
      return new Cgroup(dir, home);
    },
    find(runId: string): TaskGroup | null {
      const dir = join(parent, runId);
      return existsSync(join(dir, "cgroup.procs")) ? new Cgroup(dir, home) : null;
    },
  };
}

/**
 * Probe once whether task cgroups work here: find our own cgroup, make the parent, make a probe
 * child, move in and out of it. Any failure means the stop freezes first instead, and says why.
 */
export function setUpTaskCgroups(): CgroupSetup {
  const freeze = (reason: string): CgroupSetup => ({ groups: null, report: { path: "freeze", reason } });
  let home: string | null;
  try {
    home = ownCgroupDirectory(readFileSync("/proc/self/cgroup", "latin1"), readFileSync("/proc/self/mountinfo", "latin1"));
  } catch {
    return freeze("/proc/self/cgroup or /proc/self/mountinfo could not be read");
  }
  if (home === null) return freeze("no cgroup v2 hierarchy is mounted for this process");
  const parent = join(home, PARENT_NAME);
  try {
    mkdirSync(parent);
  } catch (err) {
    if (code(err) !== "EEXIST") {
      return freeze(`this user may not create cgroups under its own (${code(err)}); delegate one, as docs/platform.md shows`);
    }
  }
  const probe = new Cgroup(join(parent, `probe-${process.pid}`), home);
  try {
    mkdirSync(probe.dir);
  } catch (err) {
    if (code(err) !== "EEXIST") return freeze(`a task cgroup could not be created (${code(err)})`);
  }
  let moveMs: number;
  try {
    if (!existsSync(join(probe.dir, "cgroup.kill"))) return freeze("this kernel has no cgroup.kill (it needs Linux 5.14 or later)");
    try {
      const t0 = performance.now();
      probe.enter(() => undefined);
      moveMs = performance.now() - t0;
    } catch (err) {
      return freeze(`this process may not move itself between cgroups (${code(err)}); delegate its cgroup, as docs/platform.md shows`);
    }
  } finally {
    probe.remove();
  }
  const relative = readFileSync("/proc/self/cgroup", "latin1").split("\n").find((l) => l.startsWith("0::"))?.slice(3) ?? "/";
  return {
    groups: groupsUnder(parent, home),
    report: { path: "cgroup", reason: `one cgroup v2 per task under ${join(relative, PARENT_NAME)}; ${moveCost(moveMs)}` },
  };
}

/**
 * What the probe's move in and out cost, for the operator: a move that waited for the kernel says
 * so. Without `favordynmods` on the cgroup2 mount, the write that moves a process takes a global
 * lock whose writers wait out an RCU grace period (5-10 ms measured), and every task's start makes
 * such a move (docs/platform.md, "Which proof a host gets"). One measurement at start-up, so only a
 * hint: a move right after another one is fast either way. Exported for tests.
 */
export function moveCost(ms: number): string {
  const took = `the probe's move into a task cgroup and back took ${ms.toFixed(1)} ms`;
  return ms >= SLOW_MOVE_MS ? `${took}, a wait every task start repeats (a cgroup2 mount with favordynmods has none)` : took;
}

/** Above this a move waited for the kernel: a grace period is milliseconds, an unhindered move ~0.1 ms. */
const SLOW_MOVE_MS = 1;
