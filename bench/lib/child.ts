// A benchmark run as a child process, its output shown as it comes (each line under the child's
// name) and kept, so the caller can read the RESULT line after the child ends. Each child leads a
// process group of its own, so stopChildren() can end it together with what it started (a serve,
// a Bridge, an agent) when the caller is stopped: a bench left running would skew every later run.
export interface ChildRun {
  exitCode: number;
  stdout: string;
  /** The last line of stderr that names an error, for a one-line reason when the child failed. */
  lastError: string | null;
}

async function pump(stream: ReadableStream<Uint8Array>, prefix: string, into: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  const emit = (line: string) => {
    into.push(line);
    console.log(`${prefix}${line}`);
  };
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) !== -1) {
      emit(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  }
  pending += decoder.decode();
  if (pending !== "") emit(pending);
}

/** Children still running: their process group ids (each child's pid, see `detached`). */
const running = new Set<number>();

export async function runChild(name: string, argv: string[], opts: { cwd: string; env: Record<string, string | undefined> }): Promise<ChildRun> {
  const proc = Bun.spawn(argv, { cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  running.add(proc.pid);
  const out: string[] = [];
  const err: string[] = [];
  let exitCode: number;
  try {
    await Promise.all([pump(proc.stdout, `  ${name} | `, out), pump(proc.stderr, `  ${name} ! `, err)]);
    exitCode = await proc.exited;
  } finally {
    running.delete(proc.pid);
  }
  const lastError = err.filter((l) => /error/i.test(l) && !/^Bun v/.test(l)).at(-1)?.trim() ?? null;
  return { exitCode, stdout: out.join("\n"), lastError };
}

/**
 * Ends every running child's process group: SIGTERM, then SIGKILL to whatever is left after
 * `graceMs`. For a caller that is being stopped (SIGINT, SIGTERM, SIGHUP).
 */
export function stopChildren(graceMs = 2000): void {
  const groups = [...running];
  const signal = (sig: NodeJS.Signals) => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, sig);
      } catch {
        // the group is gone already
      }
    }
  };
  signal("SIGTERM");
  const until = Date.now() + graceMs;
  const alive = () =>
    groups.some((pgid) => {
      try {
        process.kill(-pgid, 0);
        return true;
      } catch {
        return false;
      }
    });
  while (alive() && Date.now() < until) Bun.sleepSync(20);
  signal("SIGKILL");
}
