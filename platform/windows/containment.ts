// Windows containment: a Job Object per task with KILL_ON_JOB_CLOSE, assigned to the launcher
// before the provider exists (see ../launcher.ts), terminated with TerminateJobObject, and proved
// empty by the job's own ActiveProcesses count.
//
// Grace on Windows: there is no SIGTERM for windowless processes, so the polite stop is closing the
// provider's stdin (EOF is how stdio agents are told to finish) and waiting up to graceMs for the
// job to empty by itself; then TerminateJobObject.
import { platformError } from "../errors.ts";
import { scrubEnv } from "../env.ts";
import { GO_BYTE, launcherCommand } from "../launcher.ts";
import { DEFAULT_KILL_PHASE_MS, DEFAULT_STDERR_LIMIT, validateSpawnSpec } from "../posix/containment.ts";
import { ByteRing } from "../ring-buffer.ts";
import type { ContainedProcess, Containment, SpawnSpec, StopEvidence, SweepResult } from "../types.ts";
import { JobObject } from "./job.ts";

const TERMINATED_EXIT_CODE = 137;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Job names are per session namespace (`Local\`) and may not contain a backslash. */
export function jobNameFor(runId: string): string {
  return `Local\\serverfs-run-${runId.replace(/[^A-Za-z0-9._:-]/g, "_")}`;
}

async function proveEmpty(job: JobObject, deadline: number): Promise<boolean> {
  for (let pause = 1; ; pause = Math.min(pause * 2, 10)) {
    if (job.activeProcesses() === 0) return true;
    if (performance.now() >= deadline) return false;
    await sleep(pause);
  }
}

async function stopJob(job: JobObject, graceMs: number, politeStop: () => void, killPhaseMs: number): Promise<StopEvidence> {
  const started = performance.now();
  const done = (proved: boolean, method: StopEvidence["method"]): StopEvidence => ({
    proved,
    survivors: proved ? [] : job.pids().map((pid) => ({ pid, command: "unknown" })),
    method,
    elapsedMs: performance.now() - started,
    proof: "job",
  });
  try {
    if (job.activeProcesses() === 0) return done(true, "already-exited");
    if (graceMs > 0) {
      politeStop();
      if (await proveEmpty(job, started + graceMs)) return done(true, "term");
    }
    job.terminate(TERMINATED_EXIT_CODE);
    return done(await proveEmpty(job, performance.now() + killPhaseMs), "kill");
  } catch {
    return done(false, "kill");
  }
}

export function createWindowsContainment(options: { killPhaseMs?: number } = {}): Containment {
  const killPhaseMs = options.killPhaseMs ?? DEFAULT_KILL_PHASE_MS;

  async function spawn(spec: SpawnSpec): Promise<ContainedProcess> {
    validateSpawnSpec(spec);
    const job = JobObject.create(jobNameFor(spec.runId));
    if (job === null) throw platformError("SPAWN_FAILED", "could not create a job object for the provider");
    const launcher = launcherCommand(spec.argv);
    let child: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
    try {
      child = Bun.spawn(launcher.argv, {
        cwd: spec.cwd,
        env: { ...scrubEnv(spec.env, spec.runId), ...launcher.env },
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        windowsHide: true,
      });
    } catch (err) {
      job.close();
      const code = (err as { code?: unknown })?.code;
      throw platformError("SPAWN_FAILED", `could not start the provider process${typeof code === "string" ? ` (${code})` : ""}`);
    }
    if (!job.assignPid(child.pid)) {
      child.kill();
      job.close();
      throw platformError("SPAWN_FAILED", "could not assign the provider to its job object");
    }
    child.stdin.write(new Uint8Array([GO_BYTE]));
    await child.stdin.flush();
    const ring = new ByteRing(spec.stderrLimitBytes ?? DEFAULT_STDERR_LIMIT);
    void (async () => {
      try {
        for await (const chunk of child.stderr) ring.push(chunk);
      } catch {
        // pipe closed
      }
    })();
    let stopping: Promise<StopEvidence> | null = null;
    return {
      pid: child.pid,
      runId: spec.runId,
      stdin: child.stdin,
      stdout: child.stdout,
      stderrTail: () => ring.snapshot(),
      exited: child.exited,
      stop(graceMs: number): Promise<StopEvidence> {
        if (stopping === null) {
          stopping = stopJob(job, graceMs, () => {
            try {
              void child.stdin.end();
            } catch {
              // already closed
            }
          }, killPhaseMs).finally(() => {
            stopping = null;
          });
        }
        return stopping;
      },
      members: async () => job.pids(),
    };
  }

  async function sweep(runIds: string[], graceMs: number): Promise<SweepResult> {
    const started = performance.now();
    let found = 0;
    const survivors: StopEvidence["survivors"] = [];
    let proved = true;
    for (const runId of runIds) {
      // With KILL_ON_JOB_CLOSE, a job nobody holds open any more has already killed its tree.
      const job = JobObject.open(jobNameFor(runId));
      if (job === null) continue;
      try {
        found += job.pids().length;
        const evidence = await stopJob(job, 0, () => {}, killPhaseMs + Math.max(0, graceMs));
        if (!evidence.proved) {
          proved = false;
          survivors.push(...evidence.survivors);
        }
      } finally {
        job.close();
      }
    }
    return {
      found,
      evidence: { proved, survivors, method: found === 0 ? "already-exited" : "kill", elapsedMs: performance.now() - started, proof: "job" },
    };
  }

  return { spawn, sweep };
}
