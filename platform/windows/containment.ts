// Windows containment: an unnamed Job Object per task with KILL_ON_JOB_CLOSE, assigned to the
// launcher before the provider exists (see ../launcher.ts), terminated with TerminateJobObject, and
// proved empty by the job's own ActiveProcesses count plus a scan for processes that left it
// (./job-stop.ts).
//
// Grace on Windows: there is no SIGTERM for windowless processes, so the polite stop is closing the
// provider's stdin (EOF is how stdio agents are told to finish) and waiting up to graceMs for the
// job to empty by itself; then TerminateJobObject.
import { platformError } from "../errors.ts";
import { scrubEnv } from "../env.ts";
import { GO_BYTE, launcherCommand } from "../launcher.ts";
import { DEFAULT_KILL_PHASE_MS, DEFAULT_STDERR_LIMIT, STDERR_DRAIN_MS, validateSpawnSpec } from "../posix/containment.ts";
import { StreamTail } from "../ring-buffer.ts";
import type { ContainedProcess, Containment, SpawnSpec, StopEvidence, SweepResult } from "../types.ts";
import { JobObject } from "./job.ts";
import { JobTree, stopJob } from "./job-stop.ts";
import { sweepMarkers } from "./marker-sweep.ts";

export function createWindowsContainment(options: { killPhaseMs?: number } = {}): Containment {
  const killPhaseMs = options.killPhaseMs ?? DEFAULT_KILL_PHASE_MS;

  async function spawn(spec: SpawnSpec): Promise<ContainedProcess> {
    validateSpawnSpec(spec);
    const job = JobObject.create();
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
    const tree = new JobTree();
    tree.note([child.pid]);
    child.stdin.write(new Uint8Array([GO_BYTE]));
    await child.stdin.flush();
    const stderr = new StreamTail(child.stderr, spec.stderrLimitBytes ?? DEFAULT_STDERR_LIMIT);
    let stopping: Promise<StopEvidence> | null = null;
    return {
      pid: child.pid,
      runId: spec.runId,
      stdin: child.stdin,
      stdout: child.stdout,
      stderrTail: () => stderr.snapshot(),
      exited: child.exited,
      stop(graceMs: number): Promise<StopEvidence> {
        if (stopping === null) {
          stopping = stopJob(job, tree, spec.runId, graceMs, () => {
            try {
              void child.stdin.end();
            } catch {
              // already closed
            }
          }, killPhaseMs)
            .then(async (evidence) => {
              // no writer of the stderr pipe is left: read it to its end before anyone takes the tail
              if (evidence.proved) await stderr.drained(STDERR_DRAIN_MS);
              return evidence;
            })
            .finally(() => {
              stopping = null;
            });
        }
        return stopping;
      },
      members: async () => tree.note(job.pids()),
    };
  }

  /** After a Bridge crash: see ./marker-sweep.ts. */
  async function sweep(runIds: string[], graceMs: number): Promise<SweepResult> {
    return sweepMarkers(runIds, graceMs, killPhaseMs);
  }

  return { spawn, sweep };
}
