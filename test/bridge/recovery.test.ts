// Crash and recovery with a real `serverfs bridge` process: SIGKILL mid-task, restart, and check
// that nothing is re-run, the task is interrupted/BRIDGE_RESTARTED, leftover provider processes
// are swept with proof before the guard goes, and unresolvable guards keep blocking writes.
// Also: the serve-side lease gate, the one-instance lock and schema migrations.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import fs from "node:fs";
import path from "node:path";
import { bridgePaths, leaseFiles } from "../../src/bridge/deployment.ts";
import { startBridge } from "../../src/bridge/daemon.ts";
import { createLeaseGate } from "../../src/bridge/lease-gate.ts";
import { migrate, openStateDatabase } from "../../src/bridge/store/db.ts";
import { MIGRATIONS } from "../../src/bridge/store/migrations.ts";
import { leases } from "../../platform/index.ts";
import { reportedPids as pidsOf, spawnBridgeProcess } from "../support/bridge-process.ts";
import { CLI } from "../support/proc.ts";
import { eventually, pidAlive } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup, makeRegistry, makeWorkdir, startHarness, turnCount } from "./helpers.ts";
const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function deployment() {
  const root = tempDir();
  dirs.push(root);
  const repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  const stateDir = path.join(root, "state");
  const config = path.join(root, "serverfs.toml");
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${stateDir}"\n[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\n` +
      `agent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n[agent]\nenabled = true\nenable_fake_runtime = true\n`,
  );
  const registry = makeRegistry(stateDir, [makeWorkdir("repo", repo)]);
  return { root, repo, stateDir, config, registry, turnLog: path.join(root, "turns.log") };
}

function spawnBridge(d: ReturnType<typeof deployment>) {
  return spawnBridgeProcess(d.config, bridgePaths(d.registry).socketPath, { env: { SERVERFS_FAKE_TURN_LOG: d.turnLog } });
}


describe("crash and restart of a real serverfs bridge", () => {
  test("SIGKILL mid-task → restart: interrupted/BRIDGE_RESTARTED, leftovers swept, guard cleared with proof, nothing re-run", async () => {
    const d = deployment();

    const first = await spawnBridge(d);
    const submitted = await first.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "spawn:3" });
    const taskId = submitted.task_id as string;
    const pids = await pidsOf(first.client, taskId);
    const providerPid = Number(fs.readFileSync(d.turnLog, "utf8").trim().split(" ")[1]);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    const { guardFile, lockFile } = leaseFiles(d.registry, "repo");
    // The Bridge is gone but its provider's grandchildren are not (the provider itself exits when its
    // stdin closes); the guard survives the crash and the lock is free.
    expect(fs.existsSync(guardFile)).toBe(true);
    expect(pids.filter(pidAlive).length).toBe(3);
    const probe = leases().tryAcquire(lockFile);
    expect(probe).not.toBeNull();
    probe!.release();
    // serve's mutations are blocked by the guard meanwhile.
    const gate = createLeaseGate(d.registry);
    await expect(gate.run(d.registry.workdirs[0]!, async () => "wrote")).rejects.toMatchObject({ code: "WORKDIR_RECOVERY_REQUIRED" });

    const second = await spawnBridge(d);
    const t = await second.client.call("task.get", { task_id: taskId });
    expect([t.status, t.error_code]).toEqual(["interrupted", "BRIDGE_RESTARTED"]);
    const ev = (await second.client.call("task.events", { task_id: taskId, limit: 500 })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    expect(ev.find((e) => e.event_type === "task.reconciled")!.payload).toEqual({
      status: "interrupted",
      provider_active: false,
      error_code: "BRIDGE_RESTARTED",
    });
    const proof = ev.find((e) => e.event_type === "runtime.stop_proof")!.payload;
    expect([proof.provider_started, proof.proved, proof.survivors]).toEqual([true, true, 0]);
    expect(proof.swept).toBeGreaterThanOrEqual(3);
    expect([providerPid, ...pids].filter(pidAlive)).toEqual([]);
    expect(fs.existsSync(guardFile)).toBe(false);
    expect(turnCount(d.turnLog)).toBe(1);
    // The workdir is usable again, for the Bridge and for serve.
    expect(await gate.run(d.registry.workdirs[0]!, async () => "wrote")).toBe("wrote");
    const next = await second.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:again" });
    for (let i = 0; i < 200; i++) {
      const v = await second.client.call("task.get", { task_id: next.task_id, wait_seconds: 1 });
      if (v.status === "succeeded") break;
    }
    expect(turnCount(d.turnLog)).toBe(2);
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);
  }, 30_000);

  test("SIGTERM with a running task: interrupted/BRIDGE_SHUTDOWN, provider tree stopped, exit 0", async () => {
    const d = deployment();
    const b = await spawnBridge(d);
    const taskId = (await b.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "spawn:2" })).task_id as string;
    const pids = await pidsOf(b.client, taskId);
    b.proc.kill("SIGTERM");
    expect(await b.proc.exited).toBe(0);
    expect(pids.filter(pidAlive)).toEqual([]);
    const db = new Database(path.join(d.stateDir, "bridge.sqlite3"), { readonly: true });
    expect(db.query("SELECT status, error_code FROM tasks WHERE task_id = ?").get(taskId)).toEqual({ status: "interrupted", error_code: "BRIDGE_SHUTDOWN" });
    db.close();
    expect(fs.existsSync(leaseFiles(d.registry, "repo").guardFile)).toBe(false);
  }, 30_000);
});

describe("recovery guard rules", () => {
  test("an orphaned guard (unknown task) survives restart and blocks Agent writes and serve mutations", async () => {
    const h = await startHarness();
    const { guardFile } = leaseFiles(h.registry, "repo");
    await h.stop();
    fs.writeFileSync(guardFile, JSON.stringify({ schema_version: 1, task_id: "agt_ffffffffffffffffffffffff", key: "alias:repo" }), { mode: 0o600 });
    const again = await startHarness({ reuse: { root: h.root, stateDir: h.stateDir } });
    try {
      expect(fs.existsSync(guardFile)).toBe(true);
      expect(await again.fail("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:x" })).toBe(
        "WORKDIR_RECOVERY_REQUIRED",
      );
      // review tasks take no lease and are not blocked.
      const r = await again.submit("complete:ok", { profile: "review" });
      expect((await again.waitTerminal(r)).status).toBe("succeeded");
      await expect(createLeaseGate(again.registry).run(again.registry.workdirs[0]!, async () => 1)).rejects.toMatchObject({
        code: "WORKDIR_RECOVERY_REQUIRED",
      });
      fs.writeFileSync(guardFile, "{not json");
      expect(await again.fail("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:x" })).toBe(
        "WORKDIR_RECOVERY_REQUIRED",
      );
    } finally {
      await again.stop();
      cleanup(h.root);
    }
  });

  test("crash window: a terminal task's leftover guard is cleared at restart only because its stop is proved", async () => {
    const h = await startHarness();
    const id = await h.submit("complete:done");
    await h.waitTerminal(id);
    const { guardFile } = leaseFiles(h.registry, "repo");
    await h.stop();
    fs.writeFileSync(
      guardFile,
      JSON.stringify({ schema_version: 1, task_id: id, run_id: `run_${id.slice(4)}`, key: "alias:repo", runtime: "fake", workdir_alias: "repo" }),
      { mode: 0o600 },
    );
    const again = await startHarness({ reuse: { root: h.root, stateDir: h.stateDir } });
    try {
      expect(fs.existsSync(guardFile)).toBe(false);
      const next = await again.submit("complete:next");
      expect((await again.waitTerminal(next)).status).toBe("succeeded");
    } finally {
      await again.stop();
      cleanup(h.root);
    }
  });
});

describe("serve-side lease gate", () => {
  test("busy while the Bridge holds the lease; guard dir/symlink unsafe; missing lock file; never creates lock files", async () => {
    const h = await startHarness();
    try {
      const wd = h.registry.workdirs[0]!;
      const gate = createLeaseGate(h.registry);
      const { guardFile, lockFile } = leaseFiles(h.registry, "repo");
      expect(await gate.run(wd, async () => "ok")).toBe("ok");
      const id = await h.submit("wait:");
      await h.waitFor(id, (t) => t.status === "running");
      await expect(gate.run(wd, async () => "no")).rejects.toMatchObject({ code: "WORKDIR_BUSY" });
      await h.call("task.cancel", { task_id: id });
      await eventually(() => !(fs.existsSync(guardFile)));
      fs.mkdirSync(guardFile);
      await expect(gate.run(wd, async () => "no")).rejects.toMatchObject({ code: "AGENT_LOCK_UNAVAILABLE" });
      fs.rmdirSync(guardFile);
      fs.symlinkSync("/etc/passwd", guardFile);
      await expect(gate.run(wd, async () => "no")).rejects.toMatchObject({ code: "AGENT_LOCK_UNAVAILABLE" });
      fs.unlinkSync(guardFile);
      fs.unlinkSync(lockFile);
      await expect(gate.run(wd, async () => "no")).rejects.toMatchObject({ code: "AGENT_LOCK_UNAVAILABLE" });
      expect(fs.existsSync(lockFile)).toBe(false);
      // A mutation holds the lease: the Bridge cannot start a write task meanwhile.
      fs.writeFileSync(lockFile, "", { mode: 0o600 });
      let release!: () => void;
      let holding = false;
      const held = gate.run(wd, () => {
        holding = true; // the gate runs this only once it holds the lease
        return new Promise<string>((r) => (release = () => r("done")));
      });
      await eventually(() => holding);
      expect(await h.fail("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "complete:x" })).toBe("WORKDIR_BUSY");
      release();
      expect(await held).toBe("done");
    } finally {
      await h.stop();
      cleanup(h.root);
    }
  });

  test("without the Agent Bridge enabled the gate is the in-process mutex (no lock files needed)", async () => {
    const root = tempDir();
    const reg = makeRegistry(path.join(root, "state"), [makeWorkdir("repo", root)], { enabled: false });
    expect(await createLeaseGate(reg).run(reg.workdirs[0]!, async () => 7)).toBe(7);
    cleanup(root);
  });
});

describe("state", () => {
  test("one Bridge per state directory: BRIDGE_ALREADY_RUNNING", async () => {
    const h = await startHarness();
    try {
      await expect(startBridge({ registry: h.registry })).rejects.toMatchObject({ code: "BRIDGE_ALREADY_RUNNING" });
      expect(fs.statSync(h.stateDir).mode & 0o777).toBe(0o700);
      expect(fs.statSync(h.bridge.paths.dbPath).mode & 0o777).toBe(0o600);
    } finally {
      await h.stop();
      cleanup(h.root);
    }
  });

  test("a v1 database migrates additively; old rows read with nulls; a newer database is refused", async () => {
    const root = tempDir();
    const file = path.join(root, "s.sqlite3");
    const old = new Database(file, { create: true, strict: true });
    migrate(old, MIGRATIONS.slice(0, 1));
    old.query(
      "INSERT INTO tasks (task_id, runtime, workdir_alias, relative_cwd, profile, status, created_at, updated_at, final_response, result_storage) VALUES ('agt_000000000000000000000001','fake','repo','','review','succeeded','2026-01-01T00:00:00.000Z','2026-01-01T00:00:00.000Z','old','inline')",
    ).run();
    old.close();
    const db = openStateDatabase(file);
    const row = db.query("SELECT * FROM tasks").get() as Record<string, unknown>;
    expect([row.final_response, row.deadline_at, row.correlation_id, row.manifest_json, row.result_storage]).toEqual(["old", null, null, null, "inline"]);
    expect((db.query("PRAGMA user_version").get() as { user_version: number }).user_version).toBe(MIGRATIONS.length);
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'runtime_capabilities'").get()).not.toBeNull();
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => openStateDatabase(file)).toThrow(expect.objectContaining({ code: "STATE_DATABASE_TOO_NEW" }));
    cleanup(root);
  });
});

describe("bridge command", () => {
  test("usage errors and a disabled Agent Bridge exit 2 with one coded line", async () => {
    const run = async (...args: string[]) => {
      const p = Bun.spawn([process.execPath, CLI, "bridge", ...args], { stdout: "pipe", stderr: "pipe" });
      const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
      return { err: err.trim(), code };
    };
    expect(await run()).toEqual({ code: 2, err: "serverfs: bridge: USAGE_ERROR: give exactly one of --config FILE or --env-file FILE" });
    const d = deployment();
    fs.writeFileSync(d.config, fs.readFileSync(d.config, "utf8").replace("enabled = true\nenable_fake_runtime = true\n", "enabled = false\n").replace(/agent_mode.*\nagent_runtimes.*\n/, ""));
    const off = await run("--config", d.config);
    expect(off.code).toBe(2);
    expect(off.err).toMatch(/^serverfs: bridge: CONFIGURATION_ERROR: /);
    expect(off.err.split("\n").length).toBe(1);
  });
});
