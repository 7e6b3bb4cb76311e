// The survivor scan on Windows, where /proc does not exist and Wine's tasklist prints nothing: a
// fresh Toolhelp snapshot of every process, never asking serverfs. Windows offers no portable way
// to read another process's environment, so the agent's processes are found by ancestry instead
// of the marker: every process descending from the Bridge (the only parent of agent trees), as
// seen while the task ran. A process stays "the same" while its pid is alive with the same exe.
import { descendants, processAlive, processTable } from "../test/platform/windows-helpers.ts";
import { waitGone, type Seen, type Watch } from "./procscan.ts";

export class WinWatch implements Watch {
  private readonly known = new Map<number, Seen>();
  /** `roots`: the pids whose descendants count (the current Bridge; it changes on a restart). */
  constructor(private readonly roots: () => number[]) {}

  snapshot(): void {
    const table = processTable();
    for (const root of this.roots()) {
      for (const row of descendants(root, table)) if (row.pid !== root && row.threads > 0) this.known.set(row.pid, { pid: row.pid, start: row.exe, cmd: row.exe });
    }
  }

  survivors(): Seen[] {
    this.snapshot();
    const table = new Map(processTable().map((r) => [r.pid, r]));
    return [...this.known.values()].filter((p) => {
      const row = table.get(p.pid);
      return row !== undefined && row.exe === p.start && row.threads > 0 && processAlive(p.pid);
    });
  }
}

/** The scan must be able to fail: a child and its grandchild are seen, then reported gone once killed. */
export async function winSelfCheck(): Promise<void> {
  const parent = Bun.spawn([process.execPath, "-e", `Bun.spawn([process.execPath, "-e", "setTimeout(() => {}, 120000)"]); setTimeout(() => {}, 120000)`], { stdout: "ignore", stderr: "ignore" });
  const watch = new WinWatch(() => [process.pid]);
  try {
    let seen: Seen[] = [];
    for (let i = 0; i < 200 && seen.length < 2; i++) {
      await Bun.sleep(100);
      seen = watch.survivors();
    }
    if (seen.length < 2 || !seen.some((p) => p.pid === parent.pid)) throw new Error(`the Toolhelp scan does not see a child and its grandchild (saw ${seen.map((p) => `${p.pid} ${p.cmd}`).join("; ")})`);
    for (const p of seen) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const left = await waitGone(watch, 10_000);
    if (left.length > 0) throw new Error("the Toolhelp scan still reports killed processes");
  } finally {
    parent.kill("SIGKILL");
  }
}
