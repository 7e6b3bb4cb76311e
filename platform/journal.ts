// The spawn journal seam: wraps a Containment so every spawn is written down (by whoever installed a
// journal, i.e. the running Bridge) before the process exists, and crossed out only after its stop
// was proved. Code that spawns through `containment()` from platform/index.ts is covered without
// knowing about it: runtime probes and model discovery need no change.
import type { ContainedProcess, Containment, SpawnJournal, SpawnSpec, StopEvidence } from "./types.ts";

export function journaledContainment(inner: Containment, current: () => SpawnJournal | null): Containment {
  return {
    async spawn(spec: SpawnSpec): Promise<ContainedProcess> {
      const journal = current();
      // Before the spawn: a crash right after it must still find the marker written down.
      journal?.record(spec.runId);
      let proc: ContainedProcess;
      try {
        proc = await inner.spawn(spec);
      } catch (err) {
        journal?.clear(spec.runId);
        throw err;
      }
      if (!journal) return proc;
      const stop = async (graceMs: number): Promise<StopEvidence> => {
        const evidence = await proc.stop(graceMs);
        if (evidence.proved) journal.clear(spec.runId);
        return evidence;
      };
      return {
        get pid() {
          return proc.pid;
        },
        get runId() {
          return proc.runId;
        },
        get stdin() {
          return proc.stdin;
        },
        get stdout() {
          return proc.stdout;
        },
        get exited() {
          return proc.exited;
        },
        stderrTail: () => proc.stderrTail(),
        members: () => proc.members(),
        stop,
      };
    },
    sweep: (runIds, graceMs) => inner.sweep(runIds, graceMs),
  };
}

/** The installed journals; the most recently installed one records. One Bridge per process in production. */
export class JournalSlot {
  private readonly stack: SpawnJournal[] = [];

  current(): SpawnJournal | null {
    return this.stack.at(-1) ?? null;
  }

  /** Returns the uninstall function (idempotent). */
  install(journal: SpawnJournal): () => void {
    this.stack.push(journal);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const i = this.stack.lastIndexOf(journal);
      if (i !== -1) this.stack.splice(i, 1);
    };
  }
}
