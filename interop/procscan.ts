// An independent observer of what an agent left running: it reads /proc directly and never asks
// serverfs, so a containment bug cannot vouch for itself. A process counts as the agent's when its
// environment or command line carries the run's marker, or when its ancestry (as snapshotted while
// the task ran) leads to such a process; tools that scrub their environment are caught that way.
import fs from "node:fs";

export interface Seen {
  pid: number;
  start: string;
  cmd: string;
}

/** What the scenarios need of a scan (this /proc one on Linux, winscan.ts's Toolhelp one on Windows). */
export interface Watch {
  snapshot(): void;
  survivors(): Seen[];
}

/** Polls a watch until none of what it saw is alive, or the timeout; returns what still lives. */
export async function waitGone(watch: Watch, timeoutMs: number): Promise<Seen[]> {
  const until = Date.now() + timeoutMs;
  let left = watch.survivors();
  while (left.length > 0 && Date.now() < until) {
    await Bun.sleep(200);
    left = watch.survivors();
  }
  return left;
}

function stat(pid: number): { ppid: number; state: string; start: string } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: f[0]!, ppid: Number(f[1]), start: f[19]! };
  } catch {
    return null;
  }
}

function allPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((p) => p !== process.pid);
}

const read = (pid: number, what: string) => {
  try {
    return fs.readFileSync(`/proc/${pid}/${what}`, "latin1");
  } catch {
    return "";
  }
};

const live = (s: { state: string } | null) => s !== null && s.state !== "Z" && s.state !== "X";

export class ProcWatch implements Watch {
  private readonly known = new Map<string, Seen>();
  constructor(private readonly marker: string) {}

  /** Record every live process carrying the marker and all of their descendants. */
  snapshot(): void {
    const table = new Map<number, { ppid: number; state: string; start: string }>();
    for (const pid of allPids()) {
      const s = stat(pid);
      if (live(s)) table.set(pid, s!);
    }
    const roots = new Set<number>();
    for (const pid of table.keys()) if (read(pid, "environ").includes(this.marker) || read(pid, "cmdline").includes(this.marker)) roots.add(pid);
    for (const [pid, s] of table) {
      let cur: number | undefined = pid;
      for (let hops = 0; cur !== undefined && cur > 1 && hops < 64; hops++) {
        if (roots.has(cur)) {
          this.known.set(`${pid}:${s.start}`, { pid, start: s.start, cmd: read(pid, "cmdline").replace(/\0/g, " ").trim().slice(0, 120) });
          break;
        }
        cur = table.get(cur)?.ppid;
      }
    }
  }

  /** Survivors: snapshotted processes still alive as the same process, plus any new marker carrier. */
  survivors(): Seen[] {
    this.snapshot();
    return [...this.known.values()].filter((p) => {
      const s = stat(p.pid);
      return live(s) && s!.start === p.start;
    });
  }
}

/**
 * The scan must be able to fail: a marked process, and an unmarked child of it, are seen while they
 * run and reported gone once killed. Run before any agent, so a broken scan cannot pass a cell.
 */
export async function selfCheck(): Promise<void> {
  const marker = crypto.randomUUID();
  const watch = new ProcWatch(marker);
  const parent = Bun.spawn(["sh", "-c", "env -u INTEROP_MARK sleep 120 & wait"], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", INTEROP_MARK: marker }, stdout: "ignore", stderr: "ignore" });
  try {
    let seen: Seen[] = [];
    for (let i = 0; i < 50 && seen.length < 2; i++) {
      await Bun.sleep(50);
      watch.snapshot();
      seen = watch.survivors();
    }
    if (!seen.some((p) => p.cmd.startsWith("sleep 120"))) throw new Error(`the /proc scan does not see an unmarked child of a marked process (saw ${seen.map((p) => p.cmd).join("; ")})`);
    const child = seen.find((p) => p.cmd.startsWith("sleep 120"))!;
    process.kill(parent.pid, "SIGKILL");
    process.kill(child.pid, "SIGKILL");
    const left = await waitGone(watch, 5_000);
    if (left.length > 0) throw new Error("the /proc scan still reports killed processes");
  } finally {
    parent.kill("SIGKILL");
  }
}
