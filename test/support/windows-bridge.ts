// A real Bridge for the Windows runner tests: the compiled executable when SERVERFS_WINDOWS_EXE
// names it (the workflow and the Wine lane do), else bun + src/cli.ts; ready once it answers
// bridge.status over its pipe with the token it wrote.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { bridgeClientFor } from "../../src/bridge/ipc/connect.ts";
import type { BridgeClient } from "../../src/bridge/ipc/client.ts";

const repo = resolve(import.meta.dir, "../..");

export function serverfsArgv(...args: string[]): string[] {
  const exe = process.env.SERVERFS_WINDOWS_EXE;
  return exe ? [exe, ...args] : [process.execPath, join(repo, "src/cli.ts"), ...args];
}

/** A serverfs.toml with one workspace-write workdir `repo` and the Bridge on; `extra` lines are appended. */
export function writeBridgeConfig(file: string, stateDir: string, workdir: string, runtimes: string[], extra: string[] = []): string {
  writeFileSync(
    file,
    [
      "[server]",
      `state_dir = '${stateDir}'`,
      "[[workdirs]]",
      'alias = "repo"',
      `path = '${workdir}'`,
      "read_only = false",
      'agent_mode = "workspace-write"',
      `agent_runtimes = ${JSON.stringify(runtimes)}`,
      "[agent]",
      "enabled = true",
      "enable_fake_runtime = true",
      ...extra,
      "",
    ].join("\n"),
  );
  return file;
}

/** Config lines for one ACP profile `id` whose agent is the bun script `agentScript`. */
export function bunAcpProfile(id: string, agentScript: string): string[] {
  return ["[[agent.acp_profiles]]", `id = "${id}"`, `command = '${process.execPath}'`, `args = ['${agentScript}']`];
}

export interface WindowsBridge {
  proc: ReturnType<typeof Bun.spawn>;
  client: BridgeClient;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** Terminate it and wait for the exit. */
  stop(): Promise<void>;
}

export async function startWindowsBridge(config: string, stateDir: string): Promise<WindowsBridge> {
  const proc = Bun.spawn(serverfsArgv("bridge", "--config", config), { stdin: "ignore", stdout: "ignore", stderr: "pipe", windowsHide: true });
  let stderr = "";
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
  })();
  // Ready once it answers; how long that takes is the machine's business (the test's timeout
  // bounds it). A Bridge that exits instead fails here with its stderr.
  for (;;) {
    try {
      // The client reads the token when it is made, and the Bridge writes it when it starts.
      const client = bridgeClientFor({ server: { state_dir: stateDir } }, { timeoutMs: 30_000 });
      await client.call("bridge.status", {});
      return {
        proc,
        client,
        stderr: () => stderr,
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill();
          await proc.exited;
        },
      };
    } catch (err) {
      if (proc.exitCode !== null) throw new Error(`the Bridge exited (${proc.exitCode}) before it answered: ${String(err)}\n${stderr.slice(-2000)}`);
      await Bun.sleep(100);
    }
  }
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

/** task.get until `pred` holds; the long-poll waits on the Bridge, the test's timeout bounds it. */
export async function waitForTask(client: BridgeClient, taskId: string, pred: (t: Record<string, unknown>) => boolean = (t) => TERMINAL.has(t.status as string)) {
  for (;;) {
    const t = await client.call("task.get", { task_id: taskId, wait_seconds: 1 });
    if (pred(t)) return t;
  }
}
