// The provider processes of one run and their stops (docs/design/task-lifecycle.md#cancel). Each
// process is stopped once: the stop an abort starts and the run's final proof share the same
// evidence, so an unprovable tree costs one TERM-grace-KILL round, not two, before the run lets
// go of the workdir. A stop also covers spawns still in flight, so nothing the run started can
// appear after its proof.
import type { ContainedProcess, StopEvidence } from "../../../platform/types.ts";

export class RunProcesses {
  private readonly procs: ContainedProcess[] = [];
  /** Spawns that passed the run's abort check but whose process is not known yet. */
  private readonly spawning = new Set<Promise<ContainedProcess>>();
  private readonly stops = new Map<ContainedProcess, Promise<StopEvidence | null>>();

  constructor(
    private readonly graceMs: number,
    /** Told once per process whose stop could not be proved. */
    private readonly onNotProved: (ev: StopEvidence) => void,
  ) {}

  get count(): number {
    return this.procs.length;
  }

  /** Register a spawn in flight; once it started, a process of an aborted run is stopped at once. */
  async track(pending: Promise<ContainedProcess>, aborted: () => boolean): Promise<ContainedProcess> {
    this.spawning.add(pending);
    try {
      const proc = await pending;
      this.procs.push(proc);
      if (aborted()) void this.stop(proc);
      return proc;
    } finally {
      this.spawning.delete(pending);
    }
  }

  stop(proc: ContainedProcess): Promise<StopEvidence | null> {
    let stop = this.stops.get(proc);
    if (stop === undefined) {
      stop = proc.stop(this.graceMs).then(
        (ev) => {
          if (!ev.proved) this.onNotProved(ev);
          return ev;
        },
        () => null,
      );
      this.stops.set(proc, stop);
    }
    return stop;
  }

  /** Every process so far, spawns in flight included, stopped; true only when every stop is proved. */
  async stopAll(): Promise<boolean> {
    let proved: boolean;
    let seen: number;
    do {
      await Promise.allSettled([...this.spawning]);
      seen = this.procs.length;
      const evidence = await Promise.all(this.procs.map((p) => this.stop(p)));
      proved = evidence.every((ev) => ev?.proved === true);
    } while (seen !== this.procs.length || this.spawning.size > 0);
    return proved;
  }
}
