// The POSIX containment engine: which processes belong to one task, and how to stop all of them
// with proof. Membership (recomputed from a fresh process table on every look):
//   - the leader's own process group and session (the leader was started with setsid, so both
//     ids equal its pid; the kernel does not reuse a pid while a group or session still uses it);
//   - every process seen as a member before, if it still has the same start time (an orphan that
//     was re-parented to PID 1 while we were not its subreaper stays ours);
//   - every process whose exec environment carries SERVERFS_RUN_ID=<marker> (same uid only);
//   - every descendant of any of the above, by parent links, so a grandchild that called setsid
//     is still found while it is somebody's child.
// Stopping signals each member's process group (unless a process we do not own leads it) and
// each member pid, repeats the look until nothing live is left or the deadline passes, and
// reports survivors instead of throwing.
import type { StopEvidence } from "../types.ts";
import { MARKER_UNREADABLE, type ProcEntry, type ProcReader } from "./process-table.ts";

export interface EngineHooks {
  reader: ProcReader;
  /** This process: never a member, never signalled, and its children are not walked. */
  ownPid: number;
  /** Process groups that must never be signalled as a whole (ours, 0, 1). */
  forbiddenGroups: ReadonlySet<number>;
  /** Reap an adopted zombie (Linux subreaper); absent where orphans go to launchd/init. */
  reap?: (pid: number) => void;
  /** Pids Bun itself spawned and will reap: never waitpid'd by us. */
  bunChildren: ReadonlySet<number>;
  /** How long the KILL phase keeps looking before giving up on proof. */
  killPhaseMs: number;
}

export interface SetIdentity {
  leader: { pid: number; startTime: string | null } | null;
  markers: readonly string[];
}

interface Snapshot {
  table: Map<number, ProcEntry>;
  members: Map<number, ProcEntry>;
  live: ProcEntry[];
  /** Live same-uid processes whose markers could not be read: maybe ours, so never "proved gone". */
  unreadable: ProcEntry[];
}

const EMPTY: Snapshot = { table: new Map(), members: new Map(), live: [], unreadable: [] };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class ContainmentSet {
  /** pid -> start time of every process ever seen as a member. */
  private readonly known = new Map<number, string>();
  /**
   * Process-group and session ids of members seen so far. While any process is in a group or
   * session the kernel keeps its id reserved, so a process found in one of these is ours: this
   * catches a grandchild that cleared its environment and lost its parent between two looks.
   */
  private readonly knownGroups = new Set<number>();
  /** `pid:start` of processes already read and found without a marker (environ is fixed at exec). */
  private readonly unmarked = new Set<string>();
  /** Set once no live member was left: nothing can ever rejoin an empty set, and pids may be reused. */
  private finished = false;
  private stopping: Promise<StopEvidence> | null = null;

  constructor(
    private readonly hooks: EngineHooks,
    private readonly identity: SetIdentity,
  ) {}

  /** Live member pids right now. */
  livePids(): number[] {
    return this.look().live.map((e) => e.pid);
  }

  stop(graceMs: number): Promise<StopEvidence> {
    if (this.stopping === null) {
      this.stopping = this.runStop(graceMs).finally(() => {
        this.stopping = null;
      });
    }
    return this.stopping;
  }

  private look(): Snapshot {
    if (this.finished) return EMPTY;
    const { reader, ownPid } = this.hooks;
    const table = new Map<number, ProcEntry>();
    const children = new Map<number, ProcEntry[]>();
    for (const entry of reader.list()) {
      table.set(entry.pid, entry);
      const siblings = children.get(entry.ppid);
      if (siblings) siblings.push(entry);
      else children.set(entry.ppid, [entry]);
    }
    const leader = this.identity.leader;
    const current = leader ? table.get(leader.pid) : undefined;
    // If the leader's pid now names a different process, its group and session ids are free again
    // and no longer mean "ours".
    const leaderGroupIsOurs =
      leader !== null && (current === undefined || leader.startTime === null || current.startTime === leader.startTime);

    const members = new Map<number, ProcEntry>();
    const unreadable: ProcEntry[] = [];
    const queue: ProcEntry[] = [];
    const add = (entry: ProcEntry) => {
      if (entry.pid === ownPid || members.has(entry.pid)) return;
      members.set(entry.pid, entry);
      queue.push(entry);
    };
    for (const entry of table.values()) {
      if (entry.pid === ownPid) continue;
      if (leaderGroupIsOurs && leader && (entry.pgid === leader.pid || entry.sid === leader.pid)) add(entry);
      else if (this.known.get(entry.pid) === entry.startTime) add(entry);
      else if (this.knownGroups.has(entry.pgid) || this.knownGroups.has(entry.sid)) add(entry);
      else if (this.identity.markers.length > 0) {
        const verdict = this.hasMarker(entry);
        if (verdict === true) add(entry);
        else if (verdict === MARKER_UNREADABLE) unreadable.push(entry);
      }
    }
    while (queue.length > 0) {
      const parent = queue.pop()!;
      for (const child of children.get(parent.pid) ?? []) add(child);
    }
    for (const pid of this.known.keys()) if (!table.has(pid)) this.known.delete(pid);
    // Forget verdicts about processes that are gone, so a long task on a busy host stays small.
    for (const key of this.unmarked) {
      const [pid, start] = key.split(":");
      if (table.get(Number(pid))?.startTime !== start) this.unmarked.delete(key);
    }
    for (const entry of members.values()) {
      this.known.set(entry.pid, entry.startTime);
      if (!this.hooks.forbiddenGroups.has(entry.pgid)) this.knownGroups.add(entry.pgid);
      if (!this.hooks.forbiddenGroups.has(entry.sid)) this.knownGroups.add(entry.sid);
    }
    const live = [...members.values()].filter((e) => !e.zombie);
    this.reapZombies(members);
    return { table, members, live, unreadable: unreadable.filter((e) => !members.has(e.pid)) };
  }

  /**
   * A look is not atomic: a member can fork and exit between the directory listing and the read of
   * its own entry, hiding its child. The child already exists then, so a second look finds it.
   */
  private lookConfirmed(): Snapshot {
    const first = this.look();
    return first.live.length > 0 ? first : this.look();
  }

  private hasMarker(entry: ProcEntry): boolean | typeof MARKER_UNREADABLE {
    const key = `${entry.pid}:${entry.startTime}`;
    if (this.unmarked.has(key)) return false;
    const marker = this.hooks.reader.markerOf(entry.pid, this.identity.markers);
    // Not remembered: an unreadable verdict proves nothing about the next look.
    if (marker === MARKER_UNREADABLE) return entry.zombie ? false : MARKER_UNREADABLE;
    if (marker !== null) return true;
    // A zombie's environment is gone; do not remember a verdict that a live read could change.
    if (!entry.zombie) this.unmarked.add(key);
    return false;
  }

  private reapZombies(members: Map<number, ProcEntry>): void {
    const { reap, ownPid, bunChildren } = this.hooks;
    if (!reap) return;
    for (const entry of members.values()) {
      if (entry.zombie && entry.ppid === ownPid && !bunChildren.has(entry.pid)) reap(entry.pid);
    }
  }

  private signal(snapshot: Snapshot, signal: NodeJS.Signals, alreadySent?: Set<string>): void {
    const { forbiddenGroups, ownPid } = this.hooks;
    const groups = new Set<number>();
    for (const entry of snapshot.live) if (!forbiddenGroups.has(entry.pgid)) groups.add(entry.pgid);
    for (const group of groups) {
      // A group whose leader is alive and not ours holds processes we must not touch.
      const groupLeader = snapshot.table.get(group);
      if (groupLeader && !snapshot.members.has(group)) continue;
      const key = `g${group}`;
      if (alreadySent?.has(key)) continue;
      alreadySent?.add(key);
      trySignal(-group, signal);
    }
    for (const entry of snapshot.live) {
      if (entry.pid === ownPid || entry.pid <= 1) continue;
      const key = `${entry.pid}:${entry.startTime}`;
      if (alreadySent?.has(key)) continue;
      alreadySent?.add(key);
      trySignal(entry.pid, signal);
    }
  }

  private async runStop(graceMs: number): Promise<StopEvidence> {
    const started = performance.now();
    // No live member is proof only if every candidate's marker was read: an unreadable one may be
    // ours, so it is reported as a survivor and the stop is not proved.
    const done = (snap: Snapshot, method: StopEvidence["method"]): StopEvidence =>
      snap.unreadable.length === 0 ? evidence(true, [], method) : evidence(false, snap.unreadable, method);
    const evidence = (proved: boolean, survivors: ProcEntry[], method: StopEvidence["method"]): StopEvidence => {
      if (proved) this.finished = true;
      return {
        proved,
        survivors: survivors.map((e) => ({ pid: e.pid, command: e.command })),
        method,
        elapsedMs: performance.now() - started,
      };
    };
    let snapshot = EMPTY;
    try {
      snapshot = this.lookConfirmed();
      if (snapshot.live.length === 0) return done(snapshot, "already-exited");
      const grace = Number.isFinite(graceMs) ? Math.max(0, graceMs) : 0;
      const graceEnd = started + grace;
      let pause = 1;
      if (grace > 0) {
        const termSent = new Set<string>();
        this.signal(snapshot, "SIGTERM", termSent);
        while (performance.now() < graceEnd) {
          await sleep(Math.max(0, Math.min(pause, graceEnd - performance.now())));
          pause = Math.min(pause * 2, 25);
          snapshot = this.lookConfirmed();
          if (snapshot.live.length === 0) return done(snapshot, "term");
          this.signal(snapshot, "SIGTERM", termSent);
        }
      }
      const killEnd = performance.now() + this.hooks.killPhaseMs;
      pause = 1;
      for (;;) {
        this.signal(snapshot, "SIGKILL");
        await sleep(pause);
        pause = Math.min(pause * 2, 10);
        snapshot = this.lookConfirmed();
        if (snapshot.live.length === 0) return done(snapshot, "kill");
        if (performance.now() >= killEnd) return evidence(false, snapshot.live, "kill");
      }
    } catch {
      // Never throw from stop: an unreadable process table means we cannot prove anything.
      return evidence(false, snapshot.live, "kill");
    }
  }
}

function trySignal(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone. EPERM: not ours to signal; it will show up as a survivor.
  }
}
