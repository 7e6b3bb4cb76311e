// Containment for POSIX systems: each provider child is started with Bun.spawn({detached:true}),
// which calls setsid, so the child leads a new session and process group. Everything it starts is
// tracked by the ContainmentSet engine over an OS-specific process-table reader.
import { closeSync } from "node:fs";
import { platformError } from "../errors.ts";
import { RUN_ID_PATTERN, scrubEnv } from "../env.ts";
import { StreamTail } from "../ring-buffer.ts";
import type { ContainedProcess, Containment, SpawnSpec, StopEvidence, SweepResult } from "../types.ts";
import { ContainmentSet, type EngineHooks } from "./containment-set.ts";
import type { ProcReader } from "./process-table.ts";
import { MarkerBoundaries } from "./marker-boundary.ts";
import { combineGroups, type TaskGroup, type TaskGroups } from "./task-group.ts";

export const DEFAULT_STDERR_LIMIT = 64 * 1024;
/**
 * After a proved stop, how long the stderr pipe gets to deliver what the tree wrote before it died
 * (it is already in the pipe; only a writer outside the tree could hold its end open this long).
 */
export const STDERR_DRAIN_MS = 500;
/** How long the KILL phase keeps looking for stragglers before reporting them as survivors. */
export const DEFAULT_KILL_PHASE_MS = 2000;

/** Pids Bun spawned in this process (across every containment): Bun reaps them, we never do. */
const bunChildren = new Set<number>();

export interface PosixContainmentOptions {
  reader: ProcReader;
  /** This process's own process group and session: never signalled or adopted as a whole. */
  ownGroups: number[];
  reap?: (pid: number) => void;
  /** Start time of a pid, for pid-reuse protection of the leader. */
  startTimeOf: (pid: number) => string | null;
  killPhaseMs?: number;
  /** A descriptor every task's leader inherits as fd 3 (the macOS marker file); closed here after spawn. */
  openMarkerFd?: (runId: string) => number;
  /** Called once the leader runs (macOS writes the leader's lineage ids into its marker file). */
  onSpawned?: (runId: string, pid: number) => void;
  /** Called with a run id once its stop or sweep is proved (macOS then removes the marker file). */
  onProved?: (runId: string) => void;
  /** One kernel group per task (Linux cgroup v2), where the host lets us make them. */
  taskGroups?: TaskGroups | null;
  /** Whether orphans of our tasks are re-parented to this process (Linux subreaper). */
  adoptsOrphans?: () => boolean;
}

export function validateSpawnSpec(spec: SpawnSpec): void {
  if (!Array.isArray(spec.argv) || spec.argv.length === 0) {
    throw platformError("INVALID_ARGUMENT", "spawn needs a non-empty argv");
  }
  for (const arg of spec.argv) {
    if (typeof arg !== "string" || arg.includes("\0")) {
      throw platformError("INVALID_ARGUMENT", "spawn argv items must be strings without NUL");
    }
  }
  if (spec.argv[0] === "") throw platformError("INVALID_ARGUMENT", "spawn argv[0] must not be empty");
  if (typeof spec.cwd !== "string" || spec.cwd === "" || spec.cwd.includes("\0")) {
    throw platformError("INVALID_ARGUMENT", "spawn needs a working directory");
  }
  if (typeof spec.runId !== "string" || !RUN_ID_PATTERN.test(spec.runId)) {
    throw platformError("INVALID_ARGUMENT", `run id '${String(spec.runId).slice(0, 64)}' is not a valid marker`);
  }
  const limit = spec.stderrLimitBytes;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0 || limit > 64 * 1024 * 1024)) {
    throw platformError("INVALID_ARGUMENT", "stderrLimitBytes must be an integer between 0 and 64 MiB");
  }
}

export function createPosixContainment(options: PosixContainmentOptions): Containment {
  const boundaries = new MarkerBoundaries();
  const hooks: EngineHooks = {
    reader: options.reader,
    ownPid: process.pid,
    forbiddenGroups: new Set([0, 1, process.pid, ...options.ownGroups]),
    reap: options.reap,
    bunChildren,
    killPhaseMs: options.killPhaseMs ?? DEFAULT_KILL_PHASE_MS,
    ...(options.adoptsOrphans ? { adoptsOrphans: options.adoptsOrphans } : {}),
  };

  async function spawn(spec: SpawnSpec): Promise<ContainedProcess> {
    validateSpawnSpec(spec);
    let child: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
    const markerFd = options.openMarkerFd?.(spec.runId);
    let group: TaskGroup | null = options.taskGroups?.create(spec.runId) ?? null;
    try {
      const common = { cwd: spec.cwd, env: scrubEnv(spec.env, spec.runId), detached: true };
      const start = () =>
        markerFd === undefined
          ? Bun.spawn(spec.argv, { ...common, stdin: "pipe", stdout: "pipe", stderr: "pipe" })
          : (Bun.spawn(spec.argv, { ...common, stdio: ["pipe", "pipe", "pipe", markerFd] }) as typeof child);
      child = group ? bornInside(group, start, () => (group = null)) : start();
    } catch (err) {
      group?.remove();
      const errno = (err as { code?: unknown })?.code;
      throw platformError(
        "SPAWN_FAILED",
        `could not start the provider process${typeof errno === "string" ? ` (${errno})` : ""}`,
      );
    } finally {
      // The child holds its own copy; ours would make this process look like a member.
      if (markerFd !== undefined) closeSync(markerFd);
    }
    const pid = child.pid;
    bunChildren.add(pid);
    options.onSpawned?.(spec.runId, pid);
    // Read before Bun can reap it (its exit is handled on a later turn of the event loop), so the
    // pid still names the leader, a zombie at worst.
    const leaderStart = options.startTimeOf(pid);
    const boundary = boundaries.open(spec.runId, leaderStart);
    const set = new ContainmentSet(hooks, {
      leader: { pid, startTime: leaderStart },
      markers: [spec.runId],
      group,
      bornSince: boundary.since,
    });
    const stderr = new StreamTail(child.stderr, spec.stderrLimitBytes ?? DEFAULT_STDERR_LIMIT);
    const exited = child.exited.then((code) => {
      bunChildren.delete(pid);
      // Removed only if empty (the kernel refuses otherwise); a task whose stop is never asked
      // for leaves no cgroup behind once its last process is gone.
      group?.remove();
      return code;
    });
    return {
      pid,
      runId: spec.runId,
      stdin: child.stdin,
      stdout: child.stdout,
      stderrTail: () => stderr.snapshot(),
      exited,
      stop: async (graceMs: number) => {
        const evidence = await set.stop(graceMs);
        // Removed only when empty: even an unproved stop may have emptied it.
        group?.remove();
        if (evidence.proved) {
          boundary.close();
          options.onProved?.(spec.runId);
          // no writer of the stderr pipe is left: read it to its end before anyone takes the tail
          await stderr.drained(STDERR_DRAIN_MS);
        }
        return evidence;
      },
      members: async () => {
        try {
          return set.livePids();
        } catch {
          // "No members" would be a lie the caller might act on (release a lease); say we cannot tell.
          throw platformError("IO_ERROR", "the process table could not be read");
        }
      },
    };
  }

  async function sweep(runIds: string[], graceMs: number): Promise<SweepResult> {
    const markers = runIds.filter((id) => typeof id === "string" && RUN_ID_PATTERN.test(id));
    if (markers.length === 0) {
      return { found: 0, evidence: { proved: true, survivors: [], method: "already-exited", elapsedMs: 0 } };
    }
    const groups = markers.map((id) => options.taskGroups?.find(id) ?? null).filter((g): g is TaskGroup => g !== null);
    const group = combineGroups(groups);
    const set = new ContainmentSet(hooks, { leader: null, markers, group });
    let found = 0;
    try {
      found = set.livePids().length;
    } catch {
      found = 0;
    }
    const evidence: StopEvidence = await set.stop(graceMs);
    group?.remove();
    if (evidence.proved) for (const id of markers) options.onProved?.(id);
    return { found, evidence };
  }

  return { spawn, sweep };
}

/**
 * Start the child inside its group. When this process cannot move into the group at all, the
 * task runs without one (its stop then freezes first); a failure of the spawn itself is thrown.
 */
function bornInside<T>(group: TaskGroup, start: () => T, withoutGroup: () => void): T {
  let entered = false;
  let started: { child: T } | null = null;
  try {
    return group.enter(() => {
      entered = true;
      started = { child: start() };
      return started.child;
    });
  } catch (err) {
    // Started, but this process could not move back out: the child is real and stays in its
    // group; the group's kill refuses to run while this process is inside it.
    if (started !== null) return (started as { child: T }).child;
    if (entered) throw err;
    group.remove();
    withoutGroup();
    return start();
  }
}
