// Two `serverfs bridge` processes for one state directory, as a LaunchAgent loaded into both
// gui/<uid> and user/<uid> would start them (docs/platform.md, "`serverfs service`"): the
// one-instance lease (`<state>/bridge.lock`, an flock held by the running Bridge) refuses the
// second before it touches the socket or the database. The second exits 1 with
// BRIDGE_ALREADY_RUNNING; the first keeps its socket and runs tasks; once the first has stopped,
// a Bridge starts again on the same state directory. Real processes, the real CLI.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import { spawnBridgeProcess } from "../support/bridge-process.ts";
import { TERMINAL } from "../support/bridge-rig.ts";
import { runCliAsync } from "../support/proc.ts";
import { cleanup, makeRegistry, makeWorkdir, tempDir } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function deployment() {
  const root = tempDir("sfs-two-");
  dirs.push(root);
  const repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  const stateDir = path.join(root, "state");
  const text =
    `[server]\nstate_dir = "${stateDir}"\n[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\n` +
    `agent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n[agent]\nenabled = true\nenable_fake_runtime = true\n`;
  const config = path.join(root, "serverfs.toml");
  // A second config file naming the same state directory: the lease is the state directory's.
  const otherConfig = path.join(root, "other.toml");
  fs.writeFileSync(config, text);
  fs.writeFileSync(otherConfig, text);
  return { config, otherConfig, paths: bridgePaths(makeRegistry(stateDir, [makeWorkdir("repo", repo)])) };
}

const REFUSAL = "serverfs: bridge: BRIDGE_ALREADY_RUNNING: another Bridge already runs for this state directory\n";

describe("a second Bridge on the same state directory", () => {
  test("exits 1 with BRIDGE_ALREADY_RUNNING and never serves; the first keeps serving; after it stops a Bridge starts again", async () => {
    const d = deployment();
    const first = await spawnBridgeProcess(d.config, d.paths.socketPath);
    try {
      const socketBefore = fs.statSync(d.paths.socketPath);
      for (const config of [d.config, d.otherConfig]) {
        const second = await runCliAsync(["bridge", "--config", config]);
        expect(second.code).toBe(1);
        expect(second.stderr).toBe(REFUSAL);
        expect(second.stdout).toBe("");
      }
      // The socket is still the first Bridge's (same inode: not unlinked or re-bound), and it answers as the first.
      const socketAfter = fs.statSync(d.paths.socketPath);
      expect([socketAfter.ino, socketAfter.isSocket()]).toEqual([socketBefore.ino, true]);
      expect((await first.client.call("bridge.status", {})).pid).toBe(first.proc.pid);
      // ...and runs a task to its result.
      const { task_id } = await first.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "review", prompt: "complete:still here" });
      let task = await first.client.call("task.get", { task_id });
      while (!TERMINAL.has(task.status as string)) {
        await Bun.sleep(25);
        task = await first.client.call("task.get", { task_id });
      }
      expect([task.status, task.final_response]).toEqual(["succeeded", "still here"]);
    } finally {
      expect(await first.stop()).toBe(0);
    }
    // The refusal was the lease, not something the second run broke: with the first gone, one starts.
    const again = await spawnBridgeProcess(d.config, d.paths.socketPath);
    try {
      expect((await again.client.call("bridge.status", {})).pid).toBe(again.proc.pid);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});
