// Task membership by fork lineage on macOS, which keeps no process in a task group and re-parents
// orphans to launchd. Pure, so it is tested on Linux with recorded event sequences
// (test/platform/darwin-lineage.test.ts). What it rests on, in xnu (docs/platform.md, "macOS: the
// stop proof"):
//   - p_uniqueid: a 64-bit id from a global counter, set once at fork (bsd/kern/kern_fork.c,
//     `p_uniqueid = ++nextuniqueid`), kept across exec, never reused;
//   - p_puniqueid: the parent's p_uniqueid, set when the process is inserted as a child
//     (bsd/kern/kern_proc.c, pinsertchild) and not touched by proc_reparentlocked
//     (bsd/kern/kern_exit.c): an orphan keeps its parent's id. From xnu-10063 (macOS 14.4) every
//     exec inserts a fresh proc as a child of the *current* parent, so an orphan that execs after
//     it was re-parented carries launchd's id from then on;
//   - p_idversion and p_orig_ppidversion: the process's own pid version (a second global counter
//     set at fork) and its original parent's, carried across exec and reparenting alike; the
//     latter is reported from xnu-11417 (macOS 15.4) and reads 0 before.
// All three come from proc_pidinfo(PROC_PIDUNIQIDENTIFIERINFO), which xnu answers for every uid.
// Both counters only grow, so a process born after the task's leader has larger ids than it.

/** A process's lineage ids (struct proc_uniqidentifierinfo). */
export interface ProcIds {
  unique: bigint;
  parentUnique: bigint;
  version: number;
  /** 0 where the kernel does not report it (before macOS 15.4). */
  parentVersion: number;
}

/** A process as the fork watcher recorded it while its parent still lived. */
export interface Birth extends ProcIds {
  pid: number;
}

/** One process of the current table, for classification. */
export interface LineageEntry {
  pid: number;
  zombie: boolean;
  ids: ProcIds | null;
}

export interface Classified {
  /** Processes whose fork parent is a member: members too. */
  members: number[];
  /**
   * Processes whose fork parent is gone unrecorded and was born after the leader: it may have
   * been a process of the task the watcher did not see. Never proved gone while they live.
   */
  uncertain: number[];
}

type Verdict = "member" | "uncertain" | "other";

/** The lineage of one task: every unique id and pid version known to be the task's. */
export class TaskLineage {
  private readonly uniques = new Set<bigint>();
  private readonly versions = new Set<number>();

  constructor(private readonly leader: ProcIds) {
    this.adopt(leader);
  }

  /** A process known to be a member by any means. */
  adopt(ids: ProcIds): void {
    this.uniques.add(ids.unique);
    if (ids.version !== 0) this.versions.add(ids.version);
  }

  private parentIsMember(ids: ProcIds): boolean {
    if (ids.parentVersion !== 0 && this.versions.has(ids.parentVersion)) return true;
    return this.uniques.has(ids.parentUnique);
  }

  /**
   * Fold in what the fork watcher recorded, in recording order (a parent before its children). A
   * birth whose parent is a member is a member. The ids kept grow with the task's own processes
   * and go with the lineage.
   */
  absorb(births: readonly Birth[]): void {
    for (const birth of births) {
      if (birth.unique > this.leader.unique && this.parentIsMember(birth)) this.adopt(birth);
    }
  }

  /**
   * Classify the processes of one table that are not members yet. `births` supplies the parent
   * link recorded at fork time where there is one (it survives an exec after re-parenting, which
   * the live ids do not). `members` are the pids already known to be the task's.
   */
  classify(entries: readonly LineageEntry[], members: ReadonlySet<number>, births: ReadonlyMap<bigint, Birth>): Classified {
    const verdictOfUnique = new Map<bigint, Verdict>();
    const verdictOfVersion = new Map<number, Verdict>();
    const withIds = entries.filter((e): e is LineageEntry & { ids: ProcIds } => e.ids !== null);
    for (const entry of withIds) {
      if (members.has(entry.pid)) this.adopt(entry.ids);
    }
    const birthVersions = new Set<number>();
    for (const birth of births.values()) if (birth.version !== 0) birthVersions.add(birth.version);
    const out: Classified = { members: [], uncertain: [] };
    for (const entry of [...withIds].sort((a, b) => byUnique(a.ids, b.ids))) {
      const ids = births.get(entry.ids.unique) ?? entry.ids;
      let verdict: Verdict;
      if (members.has(entry.pid) || this.uniques.has(ids.unique)) verdict = "member";
      else if (ids.unique < this.leader.unique) verdict = "other";
      else if (this.parentIsMember(ids)) verdict = "member";
      else verdict = this.throughParent(ids, verdictOfUnique, verdictOfVersion, births, birthVersions);
      verdictOfUnique.set(entry.ids.unique, verdict);
      if (entry.ids.version !== 0) verdictOfVersion.set(entry.ids.version, verdict);
      if (verdict === "member" && !members.has(entry.pid)) {
        this.adopt(entry.ids);
        out.members.push(entry.pid);
      } else if (verdict === "uncertain" && !entry.zombie) out.uncertain.push(entry.pid);
    }
    return out;
  }

  /** A process whose parent is not a member: it is what its parent is, or uncertain if that parent is gone unseen. */
  private throughParent(
    ids: ProcIds,
    ofUnique: ReadonlyMap<bigint, Verdict>,
    ofVersion: ReadonlyMap<number, Verdict>,
    births: ReadonlyMap<bigint, Birth>,
    birthVersions: ReadonlySet<number>,
  ): Verdict {
    // The original parent's pid version, where the kernel reports it, survives every exec.
    const byVersion = ids.parentVersion !== 0;
    const parent = byVersion ? ofVersion.get(ids.parentVersion) : ofUnique.get(ids.parentUnique);
    if (parent !== undefined) return parent;
    // The parent is gone. If the watcher recorded it, it was a child of some watched process and
    // absorb did not make it the task's: it belonged to another task.
    if (byVersion ? birthVersions.has(ids.parentVersion) : births.has(ids.parentUnique)) return "other";
    const bornAfterLeader = byVersion ? ids.parentVersion > this.leader.version : ids.parentUnique > this.leader.unique;
    return bornAfterLeader ? "uncertain" : "other";
  }
}

function byUnique(a: ProcIds, b: ProcIds): number {
  return a.unique < b.unique ? -1 : a.unique > b.unique ? 1 : 0;
}
