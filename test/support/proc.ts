// Process helpers: the real CLI as a child process (with a bounded wait for its exit), and
// independent observers that read /proc directly, never through the code under test, so a
// containment bug cannot hide its own survivors.
import fs from "node:fs";
import path from "node:path";

export const REPO = path.resolve(import.meta.dir, "../..");
export const CLI = path.join(REPO, "src/cli.ts");
export const BUN = process.execPath;
export const isLinux = process.platform === "linux";
/**
 * How to start `serverfs`: from source, or the executable SERVERFS_TEST_CLI_BIN names (.ci/run's
 * compiled-binary lane runs the command-line suites against dist/serverfs-linux-x64 this way).
 */
export const CLI_ARGV: readonly string[] = process.env.SERVERFS_TEST_CLI_BIN ? [path.resolve(REPO, process.env.SERVERFS_TEST_CLI_BIN)] : [BUN, CLI];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd?: string;
  /** The child's whole environment (default: this process's). */
  env?: Record<string, string | undefined>;
}

/** `serverfs <args>` to completion, synchronously. */
export function runCli(args: string[], opts: CliOptions = {}): CliResult {
  const proc = Bun.spawnSync([...CLI_ARGV, ...args], { cwd: opts.cwd ?? REPO, env: opts.env ?? process.env, stdout: "pipe", stderr: "pipe" });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

/** `serverfs <args>` to completion, without blocking the event loop (a Bridge may run in-process). */
export async function runCliAsync(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const proc = Bun.spawn([...CLI_ARGV, ...args], { ...(opts.cwd ? { cwd: opts.cwd } : {}), env: opts.env ?? process.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The exit code, or null if the process is still running after `timeoutMs`. */
export async function exitWithin(proc: { exited: Promise<number> }, timeoutMs: number): Promise<number | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    return await Promise.race([proc.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ProcFacts {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  state: string;
  startTime: string;
}

export function procFacts(pid: number): ProcFacts | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]), sid: Number(fields[3]), startTime: fields[19]! };
  } catch {
    return null;
  }
}

/** Alive and not a zombie, and (when given) still the same process (same start time). */
export function isLive(pid: number, startTime?: string): boolean {
  const facts = procFacts(pid);
  if (!facts || facts.state === "Z" || facts.state === "X") return false;
  return startTime === undefined || facts.startTime === startTime;
}

/** Alive and not a zombie; where there is no /proc, whether the pid can be signalled. */
export function pidAlive(pid: number): boolean {
  if (isLinux) return isLive(pid);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function procPids(): number[] {
  return fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

/** Pids of live processes whose command line contains `needle`. */
export function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const pid of procPids()) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(needle) && pidAlive(pid)) out.push(pid);
    } catch {
      // gone
    }
  }
  return out;
}

/** Every live process whose environment carries HOME=<home>: a provider, its tools, their children. */
export function processesWithHome(home: string): Array<{ pid: number; cmd: string }> {
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const pid of procPids()) {
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, "utf8");
      if (!env.split("\0").includes(`HOME=${home}`) || !pidAlive(pid)) continue;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      out.push({ pid, cmd });
    } catch {
      // gone or not ours
    }
  }
  return out;
}

/** Live processes whose exec environment carries SERVERFS_RUN_ID=<runId>. */
export function livePidsWithMarker(runId: string): number[] {
  const needle = `SERVERFS_RUN_ID=${runId}`;
  const out: number[] = [];
  for (const pid of procPids()) {
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
      if (env.includes(needle) && isLive(pid)) out.push(pid);
    } catch {
      // gone
    }
  }
  return out;
}

/** Live processes whose run marker starts with `prefix`: what a batch of runs left behind. */
export function livePidsWithMarkerPrefix(prefix: string): number[] {
  const needle = `\0SERVERFS_RUN_ID=${prefix}`;
  const out: number[] = [];
  for (const pid of procPids()) {
    try {
      const env = `\0${fs.readFileSync(`/proc/${pid}/environ`, "latin1")}`;
      if (env.includes(needle) && isLive(pid)) out.push(pid);
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Live processes that belong to a task by either independent criterion: the marker, or
 * membership of the leader's session (a process that cleared its environment keeps the session).
 */
export function livePidsOfTask(runId: string, leaderPid: number, leaderStart?: string): number[] {
  const out = new Set(livePidsWithMarker(runId));
  // A session id stays reserved while any process is in the session, so a session whose id is the
  // leader's pid is the leader's own, unless that pid now names a different process: then the
  // leader and its session are gone and the pid was handed out again (a busy host wraps pids).
  const reused = leaderStart !== undefined && procFacts(leaderPid) !== null && procFacts(leaderPid)!.startTime !== leaderStart;
  if (reused) return [...out].sort((a, b) => a - b);
  for (const pid of procPids()) {
    const facts = procFacts(pid);
    if (facts && facts.sid === leaderPid && isLive(pid)) out.add(pid);
  }
  return [...out].sort((a, b) => a - b);
}

/** Poll `check` until it holds (true) or `timeoutMs` passes (false, after one last check). */
export async function waitUntil(check: () => boolean, timeoutMs: number, stepMs = 10): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (check()) return true;
    if (performance.now() > end) return false;
    await Bun.sleep(stepMs);
  }
}

/**
 * Poll `check` until it holds, with no deadline of its own: how long a condition takes to come
 * true depends on the machine, so the only bound is the test's timeout (a condition that never
 * comes true fails the test there). For waits whose outcome the test then asserts.
 */
export async function eventually(check: () => boolean | Promise<boolean>, stepMs = 20): Promise<void> {
  while (!(await check())) await Bun.sleep(stepMs);
}

/** Read a child's stream until the first newline (or its end); returns all the text read. */
export async function readThroughNewline(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text;
}

/** Wait until `file` holds `count` lines (a fixture writing its pids); throws `what` on timeout. */
export async function waitForLines(file: string, count: number, timeoutMs: number, what: string): Promise<string[]> {
  const until = Date.now() + timeoutMs;
  while (!(fs.existsSync(file) && fs.readFileSync(file, "utf8").trim().split("\n").length === count)) {
    if (Date.now() > until) throw new Error(what);
    await Bun.sleep(50);
  }
  return fs.readFileSync(file, "utf8").trim().split("\n");
}
