// A provider plants a junction to a \\?\Volume{GUID}\ directory in its turn's temp directory, and
// the real Bridge's cleanup after the turn removes the junction as a link, never the target's
// files. Real Windows only: Wine cannot create a junction (mklink /J fails on its Unix-backed
// drives); test/platform/remove-tree.test.ts shows the same removal in process, under Wine with a
// Unix symlink. The provider is a fixture ACP agent (fixtures/plant-junction-agent.ts) run by the
// compiled Bridge through an ACP profile, as an operator would configure one.
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bunAcpProfile, startWindowsBridge, waitForTask, writeBridgeConfig, type WindowsBridge } from "../support/windows-bridge.ts";
import { isWine, onWindows, removeTree, volumeGuidPath } from "./windows-helpers.ts";

const realWindows = onWindows && !isWine;
const AGENT = join(import.meta.dir, "fixtures", "plant-junction-agent.ts");

describe.skipIf(!realWindows)("a junction planted in a turn's temp directory (needs real Windows: Wine cannot create junctions)", () => {
  const root = realWindows ? realpathSync(mkdtempSync(join(tmpdir(), "serverfs-turntemp-"))) : "";
  let bridge: WindowsBridge | null = null;
  afterAll(async () => {
    await bridge?.stop();
    removeTree(root);
  });

  // Defence: the scratch cleanup opens every entry handle-relative with FILE_OPEN_REPARSE_POINT and
  // deletes a reparse point as the link itself (platform/fs/remove-tree-windows.ts). Without it, a
  // path walk by lstat sees this junction (target \\?\Volume{GUID}\..., not a drive path) as a plain
  // directory, descends into it and deletes keep.txt and inner\deep.txt: the target checks fail.
  test("after the turn the junction is gone and the \\\\?\\Volume{GUID}\\ target keeps every file", async () => {
    const target = join(root, "target");
    mkdirSync(join(target, "inner"), { recursive: true });
    writeFileSync(join(target, "keep.txt"), "keep-me\n");
    writeFileSync(join(target, "inner", "deep.txt"), "deep\n");
    const volumeTarget = volumeGuidPath(target);
    // The same volume name as `mountvol C: /L` prints.
    const mountvol = spawnSync("mountvol.exe", [target.slice(0, 2), "/L"], { encoding: "utf8" });
    expect(volumeTarget.startsWith(mountvol.stdout.trim())).toBe(true);
    expect(volumeTarget).toMatch(/^\\\\\?\\Volume\{[0-9a-f-]{36}\}\\/i);

    const stateDir = join(root, "state");
    mkdirSync(join(root, "repo"));
    const config = writeBridgeConfig(join(root, "serverfs.toml"), stateDir, join(root, "repo"), ["acp-planter"], bunAcpProfile("planter", AGENT));
    bridge = await startWindowsBridge(config, stateDir);
    const taskId = (await bridge.client.call("task.submit", { runtime: "acp-planter", workdir: "repo", path: "", profile: "workspace-write", prompt: volumeTarget }))
      .task_id as string;
    const done = await waitForTask(bridge.client, taskId);
    // The junction was made and reached the target before the cleanup ran.
    expect({ status: done.status, answer: done.final_response }).toEqual({ status: "succeeded", answer: "mklink=0 through=keep-me" });

    expect(readFileSync(join(target, "keep.txt"), "utf8")).toBe("keep-me\n");
    expect(readFileSync(join(target, "inner", "deep.txt"), "utf8")).toBe("deep\n");
    expect(readdirSync(target).sort()).toEqual(["inner", "keep.txt"]);
    // The turn's temp directory (with the junction and the agent's own file in it) is gone.
    const tmpRoot = join(stateDir, "tmp");
    expect(existsSync(tmpRoot) ? readdirSync(tmpRoot).filter((n) => n.startsWith("acp")) : []).toEqual([]);
  }, 180_000);
});
