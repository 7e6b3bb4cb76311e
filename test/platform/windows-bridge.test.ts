// A real Bridge on Windows: a separate serverfs process (the compiled Windows executable when
// SERVERFS_WINDOWS_EXE names it, as the Windows lane does; else bun + src/cli.ts) with the fake
// runtime, reached over its named pipe with the per-user token. Under Wine this runs in CI
// (scripts/windows-lane/run.sh); on Linux and macOS it skips: named pipes and Job Objects are
// Windows-only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bridgeClientFor } from "../../src/bridge/ipc/connect.ts";
import type { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { deploymentPaths } from "../../src/config/paths.ts";
import { currentUserSid } from "../../platform/windows/pipe.ts";
import { pipeDaclSddl } from "../../platform/windows/pipe-dacl.ts";
import { descendants, isWine, onWindows, processAlive, processTable, removeTree } from "./windows-helpers.ts";

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);
const repo = resolve(import.meta.dir, "../..");

function serverfsArgv(...args: string[]): string[] {
  const exe = process.env.SERVERFS_WINDOWS_EXE;
  return exe ? [exe, ...args] : [process.execPath, join(repo, "src/cli.ts"), ...args];
}

describe.skipIf(!onWindows)("Windows Bridge over the named pipe (needs Windows: named pipes, Job Objects)", () => {
  let root = "";
  let config = "";
  let stateDir = "";
  let bridge: ReturnType<typeof Bun.spawn> | null = null;
  let stderr = "";
  let client: BridgeClient;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "serverfs-winbridge-"));
    stateDir = join(root, "state");
    mkdirSync(join(root, "repo"));
    config = join(root, "serverfs.toml");
    writeFileSync(
      config,
      [
        "[server]",
        `state_dir = '${stateDir}'`,
        "[[workdirs]]",
        'alias = "repo"',
        `path = '${join(root, "repo")}'`,
        "read_only = false",
        'agent_mode = "workspace-write"',
        'agent_runtimes = ["fake"]',
        "[agent]",
        "enabled = true",
        "enable_fake_runtime = true",
        "",
      ].join("\n"),
    );
    bridge = Bun.spawn(serverfsArgv("bridge", "--config", config), { stdin: "ignore", stdout: "ignore", stderr: "pipe", windowsHide: true });
    void (async () => {
      for await (const chunk of bridge!.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
    })();
    for (let i = 0; ; i++) {
      try {
        // The client reads the token when it is made, and the Bridge writes it when it starts.
        client = bridgeClientFor({ server: { state_dir: stateDir } }, { timeoutMs: 30_000 });
        await client.call("bridge.status", {});
        break;
      } catch (err) {
        if (i > 600 || bridge.exitCode !== null) throw new Error(`the Bridge did not come up: ${String(err)}\n${stderr.slice(-2000)}`);
        await Bun.sleep(100);
      }
    }
  }, 90_000);

  afterAll(async () => {
    if (bridge !== null) {
      bridge.kill();
      await bridge.exited;
    }
    removeTree(root);
  });

  async function waitFor(taskId: string, pred: (t: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const until = Date.now() + 30_000;
    for (;;) {
      const t = await client.call("task.get", { task_id: taskId, wait_seconds: 1 });
      if (pred(t)) return t;
      if (Date.now() > until) throw new Error(`timed out on ${taskId}: ${String(t.status)}`);
    }
  }

  const submit = async (prompt: string) =>
    (await client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt })).task_id as string;

  test("bridge.status answers over \\\\.\\pipe\\ after the token handshake; a client with a wrong token is refused", async () => {
    const status = await client.call("bridge.status", {});
    expect(status.pid).toBe(bridge!.pid);
    expect(status.active_tasks).toBe(0);
    const pipe = deploymentPaths({ server: { state_dir: stateDir } }).socketPath;
    expect(pipe).toMatch(/^\\\\\.\\pipe\\serverfs-[0-9a-f]{16}$/);
    const { BridgeClient } = await import("../../src/bridge/ipc/client.ts");
    // The Bridge refuses its proof (PEER_NOT_AUTHORIZED) without proving itself, so the client
    // cannot tell it from an impostor and sends no request.
    // Awaited as a plain promise: Bun 1.4.4's expect().rejects waits in a nested loop that does not
    // deliver the pipe I/O thread's messages (measured under Wine), so the call could only time out.
    const refused = await new BridgeClient({ path: pipe, pipeToken: "0".repeat(64) }, 10_000).call("bridge.status", {}).then(() => null, (e: unknown) => e);
    expect(refused).toMatchObject({
      code: "BRIDGE_NOT_AUTHENTIC",
      message: expect.stringContaining("PEER_NOT_AUTHORIZED"),
    });
  });

  test("the pipe's DACL admits the current user only, never over a network logon (read back with GetSecurityInfo)", () => {
    const pipe = deploymentPaths({ server: { state_dir: stateDir } }).socketPath;
    const sid = currentUserSid();
    // Windows maps GA to FA on a pipe and reports the protected flag; Wine keeps GA and drops "P".
    expect(pipeDaclSddl(pipe)).toMatch(new RegExp(`^D:P\\(D;;(GA|FA);;;NU\\)\\(A;;(GA|FA);;;${sid}\\)$`));
  });

  test("a fake task runs to its result through an approval round trip", async () => {
    const id = await submit("approval:build it");
    const waiting = await waitFor(id, (t) => t.pending_request_id !== null);
    expect(waiting.status).toBe("waiting_for_approval");
    const rid = waiting.pending_request_id as string;
    expect(await client.call("task.approval.respond", { task_id: id, request_id: rid, decision: "approve_once" })).toMatchObject({ resolved: true });
    const done = await waitFor(id, (t) => TERMINAL.has(t.status as string));
    expect(done.status).toBe("succeeded");
    expect(done.final_response).toBe("approval=approve_once");
  });

  test("cancelling a task whose provider spawned grandchildren leaves none of its processes alive", async () => {
    const before = new Set(descendants(bridge!.pid).map((p) => p.pid));
    // Launcher, provider and two grandchildren (Windows adds console hosts, which count too).
    const taskTree = () => descendants(bridge!.pid).filter((p) => !before.has(p.pid));
    const id = await submit("spawn:2");
    const running = await waitFor(id, (t) => t.status === "running" && taskTree().filter((p) => p.exe.toLowerCase() === "bun.exe" || p.exe.toLowerCase().startsWith("serverfs")).length >= 4);
    expect(running.status).toBe("running");
    const tree = taskTree();
    await client.call("task.cancel", { task_id: id });
    const done = await waitFor(id, (t) => TERMINAL.has(t.status as string));
    expect(done.status).toBe("cancelled");
    // Cancel is terminal-first; the run leaves the Bridge's active set only once its stop is proved.
    for (let i = 0; i < 300 && (await client.call("bridge.status", {})).running_in_process !== 0; i++) await Bun.sleep(50);
    expect((await client.call("bridge.status", {})).running_in_process).toBe(0);
    // Independently of the job: a fresh process snapshot and OpenProcess on every pid.
    const table = processTable();
    const live = (p: { pid: number; ppid: number; exe: string }) =>
      table.some((row) => row.pid === p.pid && row.ppid === p.ppid && row.exe === p.exe && row.threads > 0);
    expect(tree.filter(live)).toEqual([]);
    expect(tree.filter((p) => processAlive(p.pid))).toEqual([]);
  });

  test("a second Bridge for the same state directory is refused by the lease", async () => {
    const second = Bun.spawn(serverfsArgv("bridge", "--config", config), { stdin: "ignore", stdout: "pipe", stderr: "pipe", windowsHide: true });
    const [code, err] = await Promise.all([second.exited, new Response(second.stderr).text()]);
    expect(code).not.toBe(0);
    expect(err).toContain("BRIDGE_ALREADY_RUNNING");
    expect((await client.call("bridge.status", {})).pid).toBe(bridge!.pid);
  });
});
