// Through a real `serverfs bridge` process and a real ACP agent: the agent's shell answers SIGTERM
// by forking daemons in a loop, so the stop races new processes the whole time. The cancel answer
// arrives only once none of them is alive, whichever proof this host gives the Bridge: a cgroup
// per task (where the test may make them) and freeze-first (SERVERFS_TASK_CGROUP=off). The same
// holds when the task's deadline ends it and when the Bridge shuts down under it. Liveness is
// read from /proc, never through the code under test, right after the answer and again at the end.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import fs from "node:fs";
import path from "node:path";
import { ownCgroupDirectory } from "../../platform/linux/task-cgroup.ts";
import { bridgePaths, leaseFiles } from "../../src/bridge/deployment.ts";
import { spawnBridgeProcess, type BridgeProcess } from "../support/bridge-process.ts";
import { BUN, isLinux, livePidsWithMarker, pidAlive, waitUntil } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";
import { proofModes } from "../platform/stop-matrix.ts";
import { cleanup, makeRegistry, makeWorkdir } from "./helpers.ts";

const FIXTURE = path.resolve(import.meta.dir, "../fixtures/acp/forks-on-term.ts");
const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function deployment(agentExtra = "") {
  const root = tempDir("sfs-daemonizer-");
  dirs.push(root);
  const repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  const stateDir = path.join(root, "state");
  const pidsFile = path.join(root, "pids.json");
  const config = path.join(root, "serverfs.toml");
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${stateDir}"\n[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\n` +
      `agent_mode = "workspace-write"\nagent_runtimes = ["acp-daemonizer"]\n[agent]\nenabled = true\n${agentExtra}` +
      `[[agent.acp_profiles]]\nid = "daemonizer"\ncommand = "${BUN}"\nargs = ["${FIXTURE}", "--pids=${pidsFile}"]\nshutdown_timeout_seconds = 1\n`,
  );
  const registry = makeRegistry(stateDir, [makeWorkdir("repo", repo)]);
  return { stateDir, config, pidsFile, registry, socket: bridgePaths(registry).socketPath };
}

function rowOf(stateDir: string, taskId: string): { run_id: string; status: string; error_code: string | null } {
  const db = new Database(path.join(stateDir, "bridge.sqlite3"), { readonly: true });
  try {
    return db.query("SELECT run_id, status, error_code FROM tasks WHERE task_id = ?").get(taskId) as { run_id: string; status: string; error_code: string | null };
  } finally {
    db.close();
  }
}

const runIdOf = (stateDir: string, taskId: string) => rowOf(stateDir, taskId).run_id;

/** Submit, retrying only while the workdir's writer lease is still held (WORKDIR_BUSY). */
async function submitAndWaitForShell(bridge: BridgeProcess, d: ReturnType<typeof deployment>, key: string): Promise<{ taskId: string; shell: number; runId: string }> {
  fs.rmSync(d.pidsFile, { force: true });
  let submitted: Record<string, unknown> | null = null;
  for (let attempt = 0; submitted === null; attempt++) {
    try {
      submitted = await bridge.client.call("task.submit", { runtime: "acp-daemonizer", workdir: "repo", path: "", profile: "workspace-write", prompt: key, idempotency_key: key });
    } catch (err) {
      if ((err as { code?: string }).code !== "WORKDIR_BUSY" || attempt > 600) throw err;
      await Bun.sleep(50);
    }
  }
  const taskId = submitted.task_id as string;
  expect(await waitUntil(() => fs.existsSync(d.pidsFile) && fs.readFileSync(d.pidsFile, "utf8").length > 2, 20_000)).toBe(true);
  const [shell] = JSON.parse(fs.readFileSync(d.pidsFile, "utf8")) as number[];
  expect(pidAlive(shell!)).toBe(true);
  return { taskId, shell: shell!, runId: runIdOf(d.stateDir, taskId) };
}

function taskCgroupOf(bridgePid: number, runId: string): string | null {
  const home = ownCgroupDirectory(fs.readFileSync(`/proc/${bridgePid}/cgroup`, "latin1"), fs.readFileSync("/proc/self/mountinfo", "latin1"));
  return home === null ? null : path.join(home, "serverfs", runId);
}

for (const mode of proofModes()) {
  describe.skipIf(!isLinux || mode.skipReason !== null)(`cancel of an agent whose shell forks on SIGTERM (proof: ${mode.name}${mode.skipReason ? `; skipped: ${mode.skipReason}` : ""})`, () => {
    test("the answer comes once no process of the task is alive, and says the workdir is free", async () => {
      const d = deployment();
      let bridge: BridgeProcess | null = null;
      const runIds: string[] = [];
      try {
        bridge = await spawnBridgeProcess(d.config, d.socket, { env: { SERVERFS_TASK_CGROUP: mode.name === "freeze" ? "off" : "auto" }, clientTimeoutMs: 30_000 });
        // One task: the deadline test below submits the next one on the same workdir.
        {
          const round = 0;
          fs.rmSync(d.pidsFile, { force: true });
          const submitted = await bridge.client.call("task.submit", {
            runtime: "acp-daemonizer",
            workdir: "repo",
            path: "",
            profile: "workspace-write",
            prompt: `round ${round}`,
            idempotency_key: `daemonizer-${round}`,
          });
          const taskId = submitted.task_id as string;
          expect(await waitUntil(() => fs.existsSync(d.pidsFile) && fs.readFileSync(d.pidsFile, "utf8").length > 2, 20_000)).toBe(true);
          const [shell] = JSON.parse(fs.readFileSync(d.pidsFile, "utf8")) as number[];
          const runId = runIdOf(d.stateDir, taskId);
          runIds.push(runId);
          expect(pidAlive(shell!)).toBe(true);
          const cgroup = taskCgroupOf(bridge.proc.pid, runId);
          if (mode.name === "cgroup") expect(fs.existsSync(path.join(cgroup!, "cgroup.procs"))).toBe(true);

          const cancel = await bridge.client.call("task.cancel", { task_id: taskId });
          // Nothing of the task is alive when the answer is out, and its cgroup is gone with it.
          expect(livePidsWithMarker(runId)).toEqual([]);
          expect(pidAlive(shell!)).toBe(false);
          expect(cancel).toMatchObject({ task_id: taskId, status: "cancelled", workdir_free: true, workdir_hold_reason: null });
          if (cgroup !== null) expect(fs.existsSync(cgroup)).toBe(false);
        }
      } finally {
        if (bridge) expect(await bridge.stop()).toBe(0);
      }
      // The daemons sleep 1000 s: one that escaped any stop above would still be here.
      for (const runId of runIds) expect(livePidsWithMarker(runId)).toEqual([]);
    }, 120_000);
  
    test("a task whose deadline ends it: the next writer is accepted only once none of its processes is alive", async () => {
      const d = deployment("task_timeout_seconds = 2\n");
      let bridge: BridgeProcess | null = null;
      let runId = "";
      try {
        bridge = await spawnBridgeProcess(d.config, d.socket, { env: { SERVERFS_TASK_CGROUP: mode.name === "freeze" ? "off" : "auto" }, clientTimeoutMs: 30_000 });
        const task = await submitAndWaitForShell(bridge, d, "deadline");
        runId = task.runId;
        let view: Record<string, unknown> = {};
        for (let i = 0; i < 60 && !["failed", "cancelled", "interrupted", "succeeded"].includes(view.status as string); i++) {
          view = await bridge.client.call("task.get", { task_id: task.taskId, wait_seconds: 1 });
        }
        expect({ status: view.status, error_code: view.error_code }).toEqual({ status: "interrupted", error_code: "AGENT_TASK_TIMED_OUT" });
        // The lease goes only after the proof: once the next writer is accepted, nothing is left.
        const next = await submitAndWaitForShell(bridge, d, "after-deadline");
        expect(livePidsWithMarker(runId)).toEqual([]);
        expect(pidAlive(task.shell)).toBe(false);
        expect(await bridge.client.call("task.cancel", { task_id: next.taskId })).toMatchObject({ workdir_free: true });
        expect(livePidsWithMarker(next.runId)).toEqual([]);
      } finally {
        if (bridge) expect(await bridge.stop()).toBe(0);
      }
      expect(livePidsWithMarker(runId)).toEqual([]);
    }, 120_000);

    test("a Bridge shut down under a running task: exit 0, and the workdir's guard goes only with the proof (else the restart sweep proves it)", async () => {
      const d = deployment();
      const env = { SERVERFS_TASK_CGROUP: mode.name === "freeze" ? "off" : "auto" };
      const bridge = await spawnBridgeProcess(d.config, d.socket, { env, clientTimeoutMs: 30_000 });
      const task = await submitAndWaitForShell(bridge, d, "shutdown");
      expect(await bridge.stop()).toBe(0);
      expect(rowOf(d.stateDir, task.taskId)).toMatchObject({ status: "interrupted", error_code: "BRIDGE_SHUTDOWN" });
      // The shutdown waits for the stop's proof only so long (the service manager's stop timeout
      // bounds it). Whatever is still alive then keeps the workdir's recovery guard in place...
      const guard = leaseFiles(d.registry, "repo").guardFile;
      if (livePidsWithMarker(task.runId).length > 0) expect(fs.existsSync(guard)).toBe(true);
      else {
        expect(pidAlive(task.shell)).toBe(false);
        expect(fs.existsSync(guard)).toBe(false);
      }
      // ...and the next Bridge's start sweeps the run with proof before the guard goes.
      const next = await spawnBridgeProcess(d.config, d.socket, { env, clientTimeoutMs: 30_000 });
      try {
        expect(livePidsWithMarker(task.runId)).toEqual([]);
        expect(pidAlive(task.shell)).toBe(false);
        expect(fs.existsSync(guard)).toBe(false);
      } finally {
        expect(await next.stop()).toBe(0);
      }
    }, 120_000);
  });
}
