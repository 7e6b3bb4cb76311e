// `taskkill /F` of a real Bridge while a task's provider tree runs (Windows only; the Windows lane
// runs it under Wine too). The provider is a fixture ACP agent (fixtures/spawn-tree-agent.ts) with
// an ordinary and a detached child. Nothing of the tree may outlive the Bridge: its task job is
// kill-on-close (and the Bridge sits in a kill-on-close job of its own, platform/windows/safety-net.ts),
// so Windows ends the tree when the Bridge's last handle to the job goes with the process. A
// Toolhelp scan (platform/windows/process-scan.ts) then finds none of the tree's processes, and the
// restarted Bridge's sweep reports the run as already exited.
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exitTimeOf, holdProcess, liveCreationTime, processSnapshot, release, type HeldProcess } from "../../platform/windows/process-scan.ts";
import { bunAcpProfile, startWindowsBridge, waitForTask, writeBridgeConfig, type WindowsBridge } from "../support/windows-bridge.ts";
import { descendants, onWindows, removeTree } from "./windows-helpers.ts";

const AGENT = join(import.meta.dir, "fixtures", "spawn-tree-agent.ts");

/** The JSON file's content once it exists (the agent renames it into place whole). */
async function untilExists(file: string): Promise<unknown> {
  // no deadline of its own: the test's timeout bounds it
  while (!existsSync(file)) await Bun.sleep(20);
  return JSON.parse(readFileSync(file, "utf8"));
}

describe.skipIf(!onWindows)("taskkill /F of the Bridge mid-task (needs Windows: Job Objects, Toolhelp)", () => {
  const root = onWindows ? mkdtempSync(join(tmpdir(), "serverfs-bridgekill-")) : "";
  const bridges: WindowsBridge[] = [];
  afterAll(async () => {
    for (const b of bridges) await b.stop();
    removeTree(root);
  });

  // Defence: kill-on-close jobs around the whole tree, none of which allows breakaway: the task's
  // unnamed job and the Bridge's safety-net job (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, never
  // BREAKAWAY_OK), and the job Bun's libuv puts every child of the Bridge in, which the task job
  // nests inside. If the tree escaped them all, the detached child (outside the agent's own Bun
  // job) would outlive the killed Bridge: the wait for its exit below would never end (the test
  // fails on its timeout), the Toolhelp scan would list it, and the restarted Bridge's sweep would
  // find it by its run marker (swept 1, method "kill") instead of reporting the run already exited.
  // Measured under Wine: with KILL_ON_JOB_CLOSE taken out of JobObject.create ALONE this test still
  // passes, because Bun's job of the Bridge's children is kill-on-close too and is an ancestor of
  // the task job; it guards the property (nothing survives the Bridge), not that one flag.
  test("the provider tree dies with the Bridge; a Toolhelp scan finds none of it; the restarted Bridge reports the run stopped and interrupted", async () => {
    const stateDir = join(root, "state");
    mkdirSync(join(root, "repo"));
    const config = writeBridgeConfig(join(root, "serverfs.toml"), stateDir, join(root, "repo"), ["acp-tree"], bunAcpProfile("tree", AGENT));
    const first = await startWindowsBridge(config, stateDir);
    bridges.push(first);
    const bridgePid = first.proc.pid;
    const before = new Set(descendants(bridgePid).map((p) => p.pid));
    const report = join(root, "tree.json");
    const taskId = (await first.client.call("task.submit", { runtime: "acp-tree", workdir: "repo", path: "", profile: "workspace-write", prompt: report }))
      .task_id as string;
    // The agent writes its children's pids once it started them: the tree is complete then.
    const pids = (await untilExists(report)) as { agent: number; attached: number; detached: number };
    const tree = descendants(bridgePid).filter((p) => !before.has(p.pid));
    for (const pid of Object.values(pids)) expect(tree.map((p) => p.pid)).toContain(pid);
    // Held, so no pid of the tree can be handed to another process while the test looks.
    const held = tree.map((p) => holdProcess(p.pid)).filter((h): h is HeldProcess => h !== null);
    for (const pid of Object.values(pids)) expect(held.map((h) => h.pid)).toContain(pid);

    const kill = spawnSync("taskkill.exe", ["/F", "/PID", String(bridgePid)], { encoding: "utf8" });
    expect(kill.status).toBe(0);
    await first.proc.exited;
    try {
      // Windows ends the tree as it closes the dead Bridge's handles; each exit is waited for here
      // (the test's timeout bounds it), never guessed by a sleep.
      for (const h of held) while (exitTimeOf(h) === null) await Bun.sleep(20);
    } finally {
      for (const h of held) release(h);
    }
    const snapshot = processSnapshot();
    expect(snapshot).not.toBeNull();
    const survivors = tree.filter((p) => snapshot!.some((row) => row.pid === p.pid) && liveCreationTime(p.pid) === held.find((h) => h.pid === p.pid)!.created);
    expect(survivors).toEqual([]);

    const second = await startWindowsBridge(config, stateDir);
    bridges.push(second);
    const task = await waitForTask(second.client, taskId);
    expect({ status: task.status, code: task.error_code }).toEqual({ status: "interrupted", code: "BRIDGE_RESTARTED" });
    const events = (await second.client.call("task.events", { task_id: taskId })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    expect(events.filter((e) => e.event_type === "runtime.stop_proof").map((e) => e.payload)).toEqual([
      { provider_started: true, swept: 0, method: "already-exited", survivors: 0, proved: true },
    ]);
    expect(events.find((e) => e.event_type === "task.reconciled")?.payload).toMatchObject({ status: "interrupted", provider_active: false, error_code: "BRIDGE_RESTARTED" });
    // The workdir's recovery guard went with the proof: a new task is admitted (and killed with the test's Bridge).
    const next = await second.client.call("task.submit", { runtime: "acp-tree", workdir: "repo", path: "", profile: "workspace-write", prompt: join(root, "next.json") });
    expect(typeof next.task_id).toBe("string");
  }, 180_000);
});
