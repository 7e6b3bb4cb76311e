// A real `serverfs bridge` process (the real CLI) and a client on its socket, ready once it
// answers bridge.status.
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { CLI_ARGV } from "./proc.ts";

export interface BridgeProcess {
  proc: ReturnType<typeof Bun.spawn>;
  client: BridgeClient;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

export interface BridgeProcessOptions {
  /** Added to this process's environment. */
  env?: Record<string, string>;
  /** The client's per-call timeout (default 10 s). */
  clientTimeoutMs?: number;
  /** Keep stderr for the start-failure message (default), or drop it for long runs that log a lot. */
  stderr?: "pipe" | "ignore";
}

export async function spawnBridgeProcess(config: string, socketPath: string, opts: BridgeProcessOptions = {}): Promise<BridgeProcess> {
  const proc = Bun.spawn([...CLI_ARGV, "bridge", "--config", config], {
    stdout: "ignore",
    stderr: opts.stderr ?? "pipe",
    stdin: "ignore",
    env: { ...process.env, ...(opts.env ?? {}) },
  });
  const client = new BridgeClient({ path: socketPath }, opts.clientTimeoutMs ?? 10_000);
  // Ready once it answers; how long that takes is the machine's business (the test's timeout
  // bounds it). A Bridge that exits instead fails here with its stderr.
  while (proc.exitCode === null) {
    try {
      await client.call("bridge.status", {});
      return {
        proc,
        client,
        async stop() {
          proc.kill("SIGTERM");
          return proc.exited;
        },
      };
    } catch {
      await Bun.sleep(25);
    }
  }
  const stderr = proc.stderr instanceof ReadableStream ? await new Response(proc.stderr).text() : "";
  throw new Error(`bridge exited (${proc.exitCode}) before it answered: ${stderr}`);
}

/** The provider pids a task's events report (the fake runtime's spawn:N prompt reports them). */
export async function reportedPids(client: Pick<BridgeClient, "call">, taskId: string): Promise<number[]> {
  // no deadline of its own: the test's timeout bounds it
  for (;;) {
    const ev = (await client.call("task.events", { task_id: taskId })).events;
    const hit = ev.find((e) => Array.isArray(e.payload.pids));
    if (hit) return hit.payload.pids as number[];
    await Bun.sleep(25);
  }
}
