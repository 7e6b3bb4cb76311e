// The POSIX containment engine: which processes belong to one task, and how to stop all of them
// with proof. Membership (recomputed from a fresh process table on every look):
//   - the leader's own process group and session (the leader was started with setsid, so both
//     ids equal its pid; the kernel does not reuse a pid while a group or session still uses it);
//   - every process seen as a member before, if it still has the same start time (an orphan that
//     was re-parented to PID 1 while we were not its subreaper stays ours);
//   - every process whose exec environment carries SERVERFS_RUN_ID=<marker> (same uid only; where
//     start times compare, only processes born no earlier than the run's first leader are read:
//     an earlier one cannot have inherited the marker, see SetIdentity.bornSince);
//   - every descendant of any of the above, by parent links, so a grandchild that called setsid
//     is still found while it is somebody's child.
//   - every process in the task's kernel group (a cgroup on Linux), when the host gives us one.
// Stopping: SIGTERM to each member's process group (unless a process we do not own leads it) and
// each member pid, for the grace period; then the kill phase. A look is never atomic (a member
// can fork and exit while the table is read), so no single look proves anything:
//   - with a task group, cgroup.kill ends everything in it at once (forks in flight included) and
//     an empty group is the proof;
//   - for every member outside it (or without a group), freeze first: SIGSTOP every member and
//     look again until two looks in a row, with no signal sent between them, find the same set,
//     every one of them stopped. A stopped process cannot fork, so then nothing new can appear:
//     SIGKILL them all, and the stop is proved once two looks in a row find nothing live.
// Survivors are reported instead of thrown.
import type { StopEvidence } from "../types.ts";
import { MARKER_UNREADABLE, MARKER_UNSETTLED, type ProcEntry, type ProcReader, type TaskLineageView } from "./process-table.ts";
import type { TaskGroup } from "./task-group.ts";

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
  /**
   * Whether every orphan of our tasks is re-parented to this process (a Linux child subreaper).
   * Then only an orphan can be an unidentified member, and a process caught mid-execve whose parent
   * is some other live process is left alone: one stuck exec elsewhere on the host (a hung network
   * filesystem) would otherwise keep every stop from being proved.
   */
  adoptsOrphans?: () => boolean;
}

export interface SetIdentity {
  leader: { pid: number; startTime: string | null } | null;
  markers: readonly string[];
  /**
   * The start time of the first process `markers` were handed to (the run's first leader), where
   * known. A process can inherit a marker only by being born, at or after that, from a process
   * that carries it, so the markers of a process the reader says was born before it are never
   * read (docs/platform.md, "Who belongs to a task"). Absent or null: every candidate is read.
   */
  bornSince?: string | null;
  /** The kernel group every process of the task was born into, where the host has one. */
  group?: TaskGroup | null;
}

interface Snapshot {
  table: Map<number, ProcEntry>;
  members: Map<number, ProcEntry>;
  live: ProcEntry[];
  /** Live same-uid processes whose markers could not be read: maybe ours, so never "proved gone". */
  unreadable: ProcEntry[];
  /** Pids in the task's kernel group, and whether the group still holds any process. */
  inGroup: ReadonlySet<number>;
  groupPopulated: boolean;
  /** Same-uid processes caught in the middle of an execve: this look proves nothing about them. */
  unsettled: number;
}

const EMPTY: Snapshot = {
  table: new Map(),
  members: new Map(),
  live: [],
  unreadable: [],
  inGroup: new Set(),
  groupPopulated: false,
  unsettled: 0,
};

const keyOf = (entry: ProcEntry) => `${entry.pid}:${entry.startTime}`;

/** Nothing of the task is left in this look: no live member, and an empty group. */
const isEmpty = (snapshot: Snapshot) => snapshot.live.length === 0 && !snapshot.groupPopulated && snapshot.unsettled === 0;

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
  /** The task's fork lineage, where the reader keeps one (macOS). */
  private lineage: TaskLineageView | null;

  constructor(
    private readonly hooks: EngineHooks,
    private readonly identity: SetIdentity,
  ) {
    const { reader } = hooks;
    this.lineage = identity.leader ? (reader.lineage?.(identity.leader.pid) ?? null) : (reader.sweepLineage?.(identity.markers) ?? null);
  }

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
    const place = (entry: ProcEntry) => {
      table.set(entry.pid, entry);
      const siblings = children.get(entry.ppid);
      if (siblings) siblings.push(entry);
      else children.set(entry.ppid, [entry]);
    };
    for (const entry of reader.list()) place(entry);
    // The group is read after the table: a process born since is read on its own.
    const group = this.identity.group;
    const inGroup = new Set(group ? group.pids() : []);
    for (const pid of inGroup) {
      if (table.has(pid)) continue;
      const entry = reader.entry?.(pid);
      if (entry) place(entry);
    }
    const leader = this.identity.leader;
    const current = leader ? table.get(leader.pid) : undefined;
    // If the leader's pid now names a different process, its group and session ids are free again
    // and no longer mean "ours".
    const leaderGroupIsOurs =
      leader !== null && (current === undefined || leader.startTime === null || current.startTime === leader.startTime);

    const members = new Map<number, ProcEntry>();
    const unreadable: ProcEntry[] = [];
    const unsettled: ProcEntry[] = [];
    const queue: ProcEntry[] = [];
    const add = (entry: ProcEntry) => {
      if (entry.pid === ownPid || members.has(entry.pid)) return;
      members.set(entry.pid, entry);
      queue.push(entry);
    };
    const adopts = this.hooks.adoptsOrphans?.() ?? false;
    for (const entry of table.values()) {
      if (entry.pid === ownPid) continue;
      if (inGroup.has(entry.pid)) add(entry);
      else if (leaderGroupIsOurs && leader && (entry.pgid === leader.pid || entry.sid === leader.pid)) add(entry);
      else if (this.known.get(entry.pid) === entry.startTime) add(entry);
      else if (this.knownGroups.has(entry.pgid) || this.knownGroups.has(entry.sid)) add(entry);
      else if (this.identity.markers.length > 0 && !this.bornBeforeMarkers(entry)) {
        const verdict = this.hasMarker(entry);
        if (verdict === true) add(entry);
        else if (verdict === MARKER_UNREADABLE) unreadable.push(entry);
        else if (verdict === MARKER_UNSETTLED && !group && (!adopts || entry.ppid === ownPid || !table.has(entry.ppid))) {
          // With a task group every process of the task is in it, mid-exec or not.
          unsettled.push(entry);
        }
      }
    }
    const addDescendants = () => {
      while (queue.length > 0) {
        const parent = queue.pop()!;
        for (const child of children.get(parent.pid) ?? []) add(child);
      }
    };
    addDescendants();
    if (this.lineage) {
      // Orphans whose parent was a member (re-parented to launchd), and ones whose lineage runs
      // through a process nobody saw: those may be ours, so they are never proved gone.
      const found = this.lineage.classify(table, new Set(members.keys()), this.identity.markers);
      for (const pid of found.members) {
        const entry = table.get(pid);
        if (entry) add(entry);
      }
      addDescendants();
      for (const pid of found.uncertain) {
        const entry = table.get(pid);
        if (entry && !members.has(pid) && !unreadable.includes(entry)) unreadable.push(entry);
      }
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
    this.reapZombies(table, members);
    // Read last: a group found empty after the table was read was empty for the whole look.
    const groupPopulated = group ? group.populated() : false;
    return {
      table,
      members,
      live,
      unreadable: unreadable.filter((e) => !members.has(e.pid)),
      inGroup,
      groupPopulated,
      unsettled: unsettled.filter((e) => !members.has(e.pid)).length,
    };
  }

  /**
   * It cannot fork until something continues it: stopped as a whole, or (once sent a stop signal)
   * blocked until its vfork child execs or exits, after which the pending stop takes it before it
   * runs any code of its own.
   */
  private isFrozen(entry: ProcEntry, stopSent: ReadonlySet<string>): boolean {
    const { reader } = this.hooks;
    const wholeProcess = () => entry.threads <= 1 || (reader.allThreadsStopped?.(entry.pid) ?? false);
    if (entry.stopped) return entry.threads <= 1 || (reader.allThreadsStopped?.(entry.pid) ?? true);
    if (!entry.blocked || !stopSent.has(keyOf(entry))) return false;
    return (reader.waitsForVforkChild?.(entry.pid) ?? false) && wholeProcess();
  }

  /** Born before the markers were first handed out, so it cannot have inherited one. */
  private bornBeforeMarkers(entry: ProcEntry): boolean {
    const since = this.identity.bornSince;
    const before = this.hooks.reader.startedBefore;
    return since !== undefined && since !== null && before !== undefined && before(entry.startTime, since);
  }

  private hasMarker(entry: ProcEntry): boolean | typeof MARKER_UNREADABLE | typeof MARKER_UNSETTLED {
    const key = `${entry.pid}:${entry.startTime}`;
    if (this.unmarked.has(key)) return false;
    const marker = this.hooks.reader.markerOf(entry.pid, this.identity.markers);
    // Never remembered: the same process reads as marked once its execve is done.
    if (marker === MARKER_UNSETTLED) return entry.zombie ? false : MARKER_UNSETTLED;
    // Not remembered: an unreadable verdict proves nothing about the next look.
    if (marker === MARKER_UNREADABLE) return entry.zombie ? false : MARKER_UNREADABLE;
    if (marker !== null) return true;
    // A zombie's environment is gone; do not remember a verdict that a live read could change.
    if (!entry.zombie) this.unmarked.add(key);
    return false;
  }

  /**
   * Reap the zombies this process adopted: members, and any other child of ours in a session not
   * our own that Bun did not spawn. A task killed as a whole with its cgroup dies unseen by any
   * look, and its orphans still become our zombies (the kernel re-parents a dying parent's
   * children after it has left the cgroup, so even "populated 0" comes before some of them):
   * without this, every such stop would leave a few behind, for as long as the Bridge runs. Only
   * an orphan of a task can be such a child: every process Bun spawns for a task leads its own
   * session and is in bunChildren until Bun reaps it, and anything else Bun spawns stays in ours.
   */
  private reapZombies(table: Map<number, ProcEntry>, members: ReadonlyMap<number, ProcEntry> = new Map()): void {
    const { reap, ownPid, bunChildren, forbiddenGroups } = this.hooks;
    if (!reap) return;
    // Every member is in the table (a look places what it reads from the group there too).
    for (const entry of table.values()) {
      if (!entry.zombie || entry.ppid !== ownPid || bunChildren.has(entry.pid)) continue;
      if (members.has(entry.pid) || !forbiddenGroups.has(entry.sid)) reap(entry.pid);
    }
  }

  /**
   * One more pass once a cgroup is empty: the orphans its last processes left us as they died.
   * Only this process's own children can be reaped, so where the reader lists them that list is
   * read instead of the whole table.
   */
  private reapLateOrphans(): void {
    if (!this.hooks.reap) return;
    try {
      const { reader } = this.hooks;
      const candidates = reader.ownChildren?.() ?? reader.list();
      this.reapZombies(new Map(candidates.map((e) => [e.pid, e])));
    } catch {
      // The next look of any stop reaps them.
    }
  }

  /** Signals each member's group and pid; returns the keys of the members signalled by pid. */
  private signal(snapshot: Snapshot, signal: NodeJS.Signals, alreadySent?: Set<string>): Set<string> {
    const reached = new Set<string>();
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
      const key = keyOf(entry);
      if (alreadySent?.has(key)) continue;
      alreadySent?.add(key);
      if (trySignal(entry.pid, signal)) reached.add(key);
    }
    return reached;
  }

  private async runStop(graceMs: number): Promise<StopEvidence> {
    const started = performance.now();
    // Proved empty before: nothing can rejoin an empty set, so there is nothing to look at (the
    // run's final proof asks again after the adapter's own stop).
    if (this.finished) {
      return { proved: true, survivors: [], method: "already-exited", elapsedMs: performance.now() - started, proof: this.identity.group ? "cgroup" : "freeze" };
    }
    // No live member is proof only if every candidate's marker was read: an unreadable one may be
    // ours, so it is reported as a survivor and the stop is not proved.
    const done = (snap: Snapshot, method: StopEvidence["method"]): StopEvidence => {
      if (this.identity.group) this.reapLateOrphans();
      return snap.unreadable.length === 0 ? evidence(true, [], method) : evidence(false, snap.unreadable, method);
    };
    const evidence = (proved: boolean, survivors: ProcEntry[], method: StopEvidence["method"]): StopEvidence => {
      if (proved) {
        this.finished = true;
        this.lineage?.release();
        this.lineage = null;
      }
      return {
        proved,
        survivors: survivors.map((e) => ({ pid: e.pid, command: e.command })),
        method,
        elapsedMs: performance.now() - started,
        proof: this.identity.group ? "cgroup" : "freeze",
      };
    };
    let snapshot = EMPTY;
    try {
      snapshot = this.look();
      // Two empty looks in a row, nothing signalled between them: what the first missed (a child
      // born while the table was read, by a parent that then exited) is there for the second.
      if (isEmpty(snapshot)) {
        snapshot = this.look();
        if (isEmpty(snapshot)) return done(snapshot, "already-exited");
      }
      const grace = Number.isFinite(graceMs) ? Math.max(0, graceMs) : 0;
      const graceEnd = started + grace;
      if (grace > 0) {
        let pause = 1;
        const termSent = new Set<string>();
        this.signal(snapshot, "SIGTERM", termSent);
        let emptyOnce = false;
        const group = this.identity.group;
        while (performance.now() < graceEnd) {
          await sleep(Math.max(0, Math.min(pause, graceEnd - performance.now())));
          pause = Math.min(pause * 2, 25);
          // With a group, the grace costs what the task is, not what the host is: its members are
          // read from the group, and the whole table only once the group is empty. A task that
          // forks on SIGTERM grows while a host-wide look runs, and each look then takes longer
          // (on 2 cores, 6 such tasks stopping at once reached 13,000 processes).
          if (group && group.populated()) {
            emptyOnce = false;
            for (const pid of group.pids()) {
              if (pid === this.hooks.ownPid || termSent.has(`p${pid}`)) continue;
              termSent.add(`p${pid}`);
              trySignal(pid, "SIGTERM");
            }
            continue;
          }
          snapshot = this.look();
          if (isEmpty(snapshot)) {
            if (emptyOnce) return done(snapshot, "term");
            emptyOnce = true;
            pause = 1;
            continue;
          }
          emptyOnce = false;
          this.signal(snapshot, "SIGTERM", termSent);
        }
      }
      return await this.freezeAndKill(snapshot, done, evidence);
    } catch {
      // Never throw from stop: an unreadable process table means we cannot prove anything.
      return evidence(false, snapshot.live, "kill");
    }
  }

  /**
   * The kill phase. Everything in the task group is killed at once; everything else is frozen
   * first, then killed. Every wait is a look of the real table: the deadline only decides when to
   * give up on proof, never what counts as proved.
   */
  private async freezeAndKill(
    first: Snapshot,
    done: (snap: Snapshot, method: StopEvidence["method"]) => StopEvidence,
    evidence: (proved: boolean, survivors: ProcEntry[], method: StopEvidence["method"]) => StopEvidence,
  ): Promise<StopEvidence> {
    const killEnd = performance.now() + this.hooks.killPhaseMs;
    /** Members sent SIGKILL (by pid, or as part of the killed group): they cannot fork any more. */
    const killed = new Set<string>();
    /** Members sent SIGSTOP by pid: pending, it takes them before they run any code of their own. */
    const stopSent = new Set<string>();
    const group = this.identity.group;
    let groupKilled = false;
    const killGroup = () => {
      if (!group || groupKilled) return;
      try {
        group.kill();
        groupKilled = true;
      } catch {
        // Not killed as a group: its members are frozen and killed one by one like any other.
      }
    };
    killGroup();
    /** The frozen set the previous look found, when no signal was sent since. */
    let frozenBefore: Set<string> | null = null;
    let emptyOnce = false;
    /** A live member outside the killed group was seen: only the freeze can prove it gone. */
    let sawOutside = !groupKilled;
    /**
     * Every process of the task had SIGKILL pending before the current look began: sent after a
     * look that saw them all frozen, or by the group kill. A killed process cannot fork, and what
     * it forked before was born before the kill, so one empty look is then proof.
     */
    let converged = groupKilled;
    let snapshot = first;
    let pause = 1;
    for (;;) {
      snapshot = this.look();
      if (isEmpty(snapshot)) {
        if (converged || emptyOnce) return done(snapshot, "kill");
        emptyOnce = true;
      } else {
        emptyOnce = false;
        if (groupKilled) for (const entry of snapshot.live) if (snapshot.inGroup.has(entry.pid)) killed.add(keyOf(entry));
        if (snapshot.unsettled > 0 || snapshot.live.some((e) => !killed.has(keyOf(e)))) {
          converged = false;
          sawOutside = true;
        }
        const keys = new Set(snapshot.live.map(keyOf));
        const allFrozen = snapshot.unsettled === 0 && snapshot.live.every((e) => killed.has(keyOf(e)) || this.isFrozen(e, stopSent));
        if (!sawOutside) {
          // Everything found is in the killed group: wait for it to die.
        } else if (allFrozen && frozenBefore !== null && sameKeys(frozenBefore, keys)) {
          // Nothing can fork any more, and the last look saw every process there is: kill them.
          for (const key of this.signal(snapshot, "SIGKILL")) killed.add(key);
          converged = snapshot.live.every((e) => killed.has(keyOf(e)));
          frozenBefore = null;
        } else if (allFrozen) {
          // Look once more without signalling: a member continued meanwhile shows up running.
          frozenBefore = keys;
        } else {
          frozenBefore = null;
          for (const key of this.signal({ ...snapshot, live: snapshot.live.filter((e) => !killed.has(keyOf(e))) }, "SIGSTOP")) stopSent.add(key);
        }
      }
      // Out of time: give up on proof, unless this look was empty and only its confirmation is due.
      if (performance.now() >= killEnd && !(emptyOnce && isEmpty(snapshot))) {
        this.signal(snapshot, "SIGKILL");
        killGroup();
        return evidence(false, snapshot.live, "kill");
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 10);
    }
  }
}

function sameKeys(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const key of a) if (!b.has(key)) return false;
  return true;
}

function trySignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    // ESRCH: already gone. EPERM: not ours to signal; it will show up as a survivor.
    return false;
  }
}
