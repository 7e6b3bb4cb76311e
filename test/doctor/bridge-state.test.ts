// Doctor against real deployments with a real `serverfs bridge`: a healthy deployment, proof
// that doctor changes nothing (state dir file list, modes, sizes and mtimes, with the Bridge up,
// stopped and crashed), Bridge down, stale socket, recovery guards (a crashed task's guard, an
// orphaned guard, a guard held by a running task) and a too-new database.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import fs from "node:fs";
import path from "node:path";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { publishGuard } from "../../src/bridge/guard.ts";
import { loadRegistry } from "../../src/config/load.ts";
import { stopProof } from "../../platform/index.ts";
import { RawBridgeClient } from "../../src/bridge/ipc/client.ts";
import { reportedPids as pidsOf } from "../support/bridge-process.ts";
import { eventually, pidAlive } from "../support/proc.ts";
import { makeDeployment, runDoctor, startBridge, treeSnapshot, type Deployment } from "./helpers.ts";
import { cleanupTempDirs } from "../support/temp.ts";

// Every deployment and temp dir is a test/support temp dir: removed here, or at exit at the latest.
/**
 * A HOME of the test's own for a doctor run, so whether a Bridge service is installed (what the
 * start and restart hints depend on) is the test's doing, not the machine's. `installed` writes
 * the file `serverfs service install` writes on Linux (the systemd user unit).
 */
function privateHome(d: { root: string }, installed = false): Record<string, string> {
  const home = path.join(d.root, installed ? "home-with-service" : "home");
  fs.mkdirSync(path.join(home, ".config/systemd/user"), { recursive: true });
  if (installed) fs.writeFileSync(path.join(home, ".config/systemd/user/serverfs-bridge.service"), "[Unit]\n");
  return { HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") };
}

afterAll(cleanupTempDirs);

const deployment = makeDeployment;

async function guardFileOf(d: Deployment, alias: string): Promise<string> {
  const { registry } = await loadRegistry({ configFile: d.config });
  return leaseFiles(registry, alias).guardFile;
}


describe("healthy deployment", () => {
  test("running Bridge, 2 workdirs: every check OK, exit 0; text and JSON carry the same checks; nothing in the state dir or workdirs changes", async () => {
    const d = deployment();
    fs.writeFileSync(path.join(d.workdirs.repo!, "a.txt"), "a");
    fs.writeFileSync(path.join(d.workdirs.repo!, ".env"), "hidden");
    fs.mkdirSync(path.join(d.workdirs.repo!, "src"));
    const bridge = await startBridge(d);
    try {
      const before = treeSnapshot(d.stateDir);
      const wdBefore = [treeSnapshot(d.workdirs.repo!), treeSnapshot(d.workdirs.docs!)];
      // how long this takes is bench/doctor/healthy.ts's to measure, not a test's to assert
      const text = await runDoctor(d);
      expect(text.stderr).toBe("");
      expect(text.code).toBe(0);
      expect(text.stdout).not.toContain(": FAIL");
      // The Bridge inherits this process's cgroup: where this process may make task cgroups, so
      // may it, and a Linux Bridge without them is the one WARN a healthy deployment can have.
      const proof = stopProof();
      const warns = proof.path === "freeze" && process.platform === "linux" ? 1 : 0;
      const line = text.line("stop proof");
      if (proof.path === "cgroup") {
        // The reason ends with the probe's measured move, which the Bridge's probe and this one each
        // measure for themselves: the place must match exactly, the time only have its shape.
        const head = `stop proof: OK -- cgroup: ${proof.reason.split("; ")[0]}; `;
        expect(line.slice(0, head.length)).toBe(head);
        expect(line.slice(head.length)).toMatch(/^the probe's move into a task cgroup and back took \d+\.\d ms(, [^;]+)?; a stop is proved by the task's empty cgroup$/);
      } else expect(line).toContain(`freeze-first: ${proof.reason}`);
      expect(text.stdout.split("\n").filter((l) => l.includes(": WARN")).length).toBe(warns);
      expect(text.stdout.trimEnd().split("\n").at(-1)).toBe(`summary: 0 FAIL, ${warns} WARN`);
      // The listing goes through the file service: `.env` is hidden by policy.
      expect(text.line("workdir repo read")).toBe("workdir repo read: OK -- 2 entries visible under policy");
      expect(text.line("workdir docs read")).toBe("workdir docs read: OK -- 0 entries visible under policy");
      expect(text.line("workdir docs write")).toContain("not evaluated (read-only workdir)");
      expect(text.line("workdir repo write")).toContain("OK -- writable by this user");
      expect(text.line("state database")).toBe("state database: OK -- integrity ok, schema version 3");
      expect(text.line("bridge")).toContain("bridge: OK -- reachable");
      expect(text.line("bridge identity")).toContain(`Bridge pid ${bridge.proc.pid} runs as uid ${process.getuid!()}`);
      expect(text.line("recovery guards")).toBe("recovery guards: OK -- none: no workdir is blocked");

      const json = await runDoctor(d, ["--json"]);
      expect(json.code).toBe(0);
      const doc = JSON.parse(json.stdout) as { version: string; platform: string; checks: Array<Record<string, string>>; summary: { fail: number; warn: number } };
      expect(Object.keys(doc)).toEqual(["version", "platform", "checks", "summary"]);
      expect(doc.summary).toEqual({ fail: 0, warn: warns });
      const textLines = text.stdout.trimEnd().split("\n").slice(0, -1);
      expect(doc.checks.map((c) => `${c.label}: ${c.status} -- ${c.detail}`)).toEqual(textLines);
      expect(new Set(doc.checks.map((c) => c.id)).size).toBe(doc.checks.length);
      for (const c of doc.checks) expect(Object.keys(c)).toEqual(c.status === "WARN" ? ["id", "label", "status", "detail", "hint"] : ["id", "label", "status", "detail"]);

      expect(treeSnapshot(d.stateDir)).toEqual(before);
      expect([treeSnapshot(d.workdirs.repo!), treeSnapshot(d.workdirs.docs!)]).toEqual(wdBefore);
      // Doctor's private copy of the database is gone from its temp dir.
      expect(fs.readdirSync(d.doctorTmp)).toEqual([]);
    } finally {
      await bridge.stop();
    }
  }, 30_000);

  test("stopped Bridge (no -wal) and crashed Bridge (-wal and -shm left): doctor creates no sqlite file and changes no mtime", async () => {
    const d = deployment();
    const first = await startBridge(d);
    expect(await first.stop()).toBe(0);
    const clean = treeSnapshot(d.stateDir);
    expect([...clean.keys()].some((p) => p.endsWith("-wal"))).toBe(false);
    const r1 = await runDoctor(d);
    expect(r1.line("state database")).toBe("state database: OK -- integrity ok, schema version 3");
    expect(treeSnapshot(d.stateDir)).toEqual(clean);

    const second = await startBridge(d);
    second.proc.kill("SIGKILL");
    await second.proc.exited;
    const crashed = treeSnapshot(d.stateDir);
    expect([...crashed.keys()].some((p) => p.endsWith("-wal"))).toBe(true);
    const r2 = await runDoctor(d);
    expect(r2.line("state database")).toBe("state database: OK -- integrity ok, schema version 3");
    expect(treeSnapshot(d.stateDir)).toEqual(crashed);
    expect(fs.readdirSync(d.doctorTmp)).toEqual([]);
  }, 30_000);

  test("a deployment whose state dir does not exist yet: doctor does not create it", async () => {
    const d = deployment();
    const r = await runDoctor(d);
    expect(fs.existsSync(d.stateDir)).toBe(false);
    expect(r.line("state directory")).toContain("state directory: WARN -- ");
    expect(r.line("state database")).toContain("WARN -- no database yet");
    expect(r.code).toBe(1); // the Bridge is down, and it is enabled
  });
});

describe("Bridge down and stale socket", () => {
  test("Bridge never started with the agent enabled: FAIL with how to start it (service start only when a service is installed)", async () => {
    const d = deployment();
    const r = await runDoctor(d, [], privateHome(d));
    expect(r.code).toBe(1);
    expect(r.line("bridge")).toBe(
      `bridge: FAIL -- not running (no socket at ${d.socketPath}); fix: start the Bridge: serverfs bridge --config ${d.config} in a terminal, ` +
        `or install it as a service: serverfs service install --config ${d.config} (no service is installed); agent tools answer AGENT_BRIDGE_UNAVAILABLE until then`,
    );
    expect(r.line("state database")).toBe(
      `state database: WARN -- no database yet (the Bridge has not run with this state directory); note: start the Bridge once: serverfs bridge --config ${d.config} in a terminal, ` +
        `or install it as a service: serverfs service install --config ${d.config} (no service is installed)`,
    );
    expect(r.stdout).toContain("summary: 1 FAIL, 2 WARN");
    if (process.platform === "linux") {
      const installed = await runDoctor(d, [], privateHome(d, true));
      expect(installed.line("bridge")).toBe(
        `bridge: FAIL -- not running (no socket at ${d.socketPath}); fix: start the Bridge: serverfs service start (its systemd --user service is installed); agent tools answer AGENT_BRIDGE_UNAVAILABLE until then`,
      );
    }
  }, 30_000);

  test("the socket path holds a regular file, or a socket owned by another uid: FAIL, and doctor does not connect to it", async () => {
    const d = deployment();
    const b = await startBridge(d);
    await b.stop();
    fs.writeFileSync(d.socketPath, "not a socket", { mode: 0o600 });
    expect((await runDoctor(d)).line("bridge")).toContain(`bridge: FAIL -- ${d.socketPath} exists but is not a socket`);
    fs.unlinkSync(d.socketPath);
    if (process.getuid!() !== 0) return; // handing the socket to another uid needs root
    let connections = 0;
    const listener = Bun.listen({ unix: d.socketPath, socket: { open: () => void connections++, data: () => {} } });
    try {
      fs.chownSync(d.socketPath, 65534, 65534);
      const r = await runDoctor(d);
      expect(r.line("bridge")).toContain("bridge: FAIL -- the socket is owned by uid 65534, not 0; fix: run doctor (and serve) as the Bridge's user");
      expect(connections).toBe(0);
    } finally {
      listener.stop(true);
    }
  }, 30_000);

  test("agent disabled: no Bridge, state or runtime checks, exit 0", async () => {
    const d = deployment({ agentEnabled: false });
    const r = await runDoctor(d);
    expect(r.code).toBe(0);
    expect(r.line("agent bridge")).toContain("OK -- disabled");
    expect(r.stdout).not.toContain("\nbridge:");
    expect(r.stdout).not.toContain("state directory");
  });

  test("SIGKILLed Bridge mid-task: stale socket FAIL, and the task's recovery guard FAIL naming the task (read from the crashed database's WAL)", async () => {
    const d = deployment();
    const b = await startBridge(d);
    const submitted = await b.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "spawn:2" });
    const taskId = submitted.task_id as string;
    const pids = await pidsOf(b.client, taskId);
    b.proc.kill("SIGKILL");
    await b.proc.exited;
    try {
      const guardFile = await guardFileOf(d, "repo");
      expect(fs.existsSync(guardFile)).toBe(true);
      expect(fs.lstatSync(d.socketPath).isSocket()).toBe(true);
      const before = treeSnapshot(d.stateDir);
      const r = await runDoctor(d, [], privateHome(d));
      expect(r.code).toBe(1);
      expect(r.line("bridge")).toMatch(/^bridge: FAIL -- stale socket: .* exists but refuses connections .*; fix: start the Bridge.*replaces a stale socket/);
      const guard = r.line("workdir repo recovery guard");
      expect(guard).toContain(`FAIL -- WORKDIR_RECOVERY_REQUIRED: task ${taskId} (fake, running) may still have a live provider; writes to repo are blocked`);
      expect(guard).toContain(`fix: start the Bridge (serverfs bridge --config ${d.config} in a terminal, or install it as a service: serverfs service install --config ${d.config} (no service is installed)): at start it stops every leftover process of the task`);
      expect(guard).toContain(`SERVERFS_RUN_ID=run_${taskId.slice(4)}`);
      expect(guard).toContain("Never delete the guard by hand");
      const json = JSON.parse((await runDoctor(d, ["--json"])).stdout) as { checks: Array<Record<string, string>> };
      const g = json.checks.find((c) => c.id === "bridge.recovery.repo")!;
      expect(g.status).toBe("FAIL");
      expect(g.hint).toContain("start the Bridge");
      expect(treeSnapshot(d.stateDir)).toEqual(before);
    } finally {
      for (const pid of pids) if (pidAlive(pid)) process.kill(pid, "SIGKILL");
    }
  }, 30_000);
});

/** The task's status, through the Bridge's own long-poll, until it is `status` (however long that takes). */
async function untilStatus(client: { call(m: string, p: Record<string, unknown>): Promise<Record<string, unknown>> }, taskId: string, status: string): Promise<void> {
  while ((await client.call("task.get", { task_id: taskId, wait_seconds: 5 })).status !== status) {
    // task.get with wait_seconds returns on the next change
  }
}

describe("recovery guards with the Bridge up", () => {
  test("a guard held by a task the Bridge is running is OK; an orphaned guard (unknown task) is FAIL and says the Bridge will never clear it", async () => {
    const d = deployment({ aliases: ["repo", "other"], workdirToml: { other: `read_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` } });
    const b = await startBridge(d);
    try {
      const running = (await b.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt: "wait:" }))
        .task_id as string;
      await untilStatus(b.client, running, "running");
      // The orphan is published with the Bridge's own guard API, for a task id no store knows.
      const orphanFile = await guardFileOf(d, "other");
      publishGuard(orphanFile, {
        key: "alias:other",
        task_id: "agt_ffffffffffffffffffffffff",
        run_id: "run_ffffffffffffffffffffffff",
        runtime: "fake",
        workdir_alias: "other",
        correlation_id: null,
        native_session_id: null,
        native_turn_id: null,
      });
      const r = await runDoctor(d);
      expect(r.code).toBe(1);
      expect(r.line("workdir repo recovery guard")).toBe(`workdir repo recovery guard: OK -- held by task ${running} (fake, running); cleared when it ends`);
      const orphan = r.line("workdir other recovery guard");
      expect(orphan).toContain("FAIL -- WORKDIR_RECOVERY_REQUIRED: guard names task agt_ffffffffffffffffffffffff, which the state database does not know (orphaned)");
      expect(orphan).toContain(`then delete ${orphanFile}`);
      await b.client.call("task.cancel", { task_id: running });

      // A finished task whose guard is still there while the Bridge runs: stop was never proved.
      const done = (await b.client.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "review", prompt: "complete:x" }))
        .task_id as string;
      await untilStatus(b.client, done, "succeeded");
      fs.unlinkSync(orphanFile);
      publishGuard(orphanFile, {
        key: "alias:other",
        task_id: done,
        run_id: `run_${done.slice(4)}`,
        runtime: "fake",
        workdir_alias: "other",
        correlation_id: null,
        native_session_id: null,
        native_turn_id: null,
      });
      const again = await runDoctor(d, [], privateHome(d));
      const line = again.line("workdir other recovery guard");
      expect(line).toContain(`FAIL -- WORKDIR_RECOVERY_REQUIRED: task ${done} (fake, succeeded) may still have a live provider`);
      expect(line).toContain(`fix: restart the Bridge (stop the running serverfs bridge (SIGTERM or Ctrl-C), then serverfs bridge --config ${d.config} again (no service is installed)): at start`);
    } finally {
      await b.stop();
    }
  }, 30_000);

  test("a guard file that is not valid JSON is FAIL (fail closed)", async () => {
    const d = deployment();
    const b = await startBridge(d);
    await b.stop();
    const guardFile = await guardFileOf(d, "repo");
    fs.writeFileSync(guardFile, "{not json", { mode: 0o600 });
    const r = await runDoctor(d);
    expect(r.line("workdir repo recovery guard")).toContain("FAIL -- WORKDIR_RECOVERY_REQUIRED: the guard file is unreadable, not a regular file or not valid");
  }, 30_000);
});

describe("state database", () => {
  test("a schema newer than this binary is FAIL (the Bridge would refuse it)", async () => {
    const d = deployment();
    const b = await startBridge(d);
    await b.stop();
    const db = new Database(path.join(d.stateDir, "bridge.sqlite3"));
    db.exec("PRAGMA user_version = 99");
    db.close();
    const r = await runDoctor(d);
    expect(r.code).toBe(1);
    expect(r.line("state database")).toBe(
      "state database: FAIL -- schema version 99 is newer than this serverfs (3); fix: run the newer serverfs that wrote it (the Bridge refuses this database: STATE_DATABASE_TOO_NEW)",
    );
  }, 30_000);

  test("a database file that is not SQLite is FAIL", async () => {
    const d = deployment();
    fs.mkdirSync(d.stateDir, { mode: 0o700 });
    fs.writeFileSync(path.join(d.stateDir, "bridge.sqlite3"), "this is not a database at all, just text".repeat(200), { mode: 0o600 });
    const r = await runDoctor(d);
    expect(r.line("state database")).toContain("is not a readable SQLite database; fix: ");
  });
});

describe("Bridge version", () => {
  test("a Bridge still running another serverfs version: FAIL with restart as the fix", async () => {
    // A second copy of the sources whose package.json says another version, running the Bridge.
    const other = makeDeployment();
    const tree = path.join(other.root, "old-serverfs");
    const repo = path.resolve(import.meta.dir, "../..");
    fs.mkdirSync(tree);
    fs.cpSync(path.join(repo, "src"), path.join(tree, "src"), { recursive: true });
    fs.cpSync(path.join(repo, "platform"), path.join(tree, "platform"), { recursive: true });
    fs.symlinkSync(path.join(repo, "node_modules"), path.join(tree, "node_modules"));
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { version: string };
    fs.writeFileSync(path.join(tree, "package.json"), JSON.stringify({ ...pkg, version: "0.0.0-older" }));
    const proc = Bun.spawn([process.execPath, path.join(tree, "src", "cli.ts"), "bridge", "--config", other.config], { stdout: "ignore", stderr: "ignore", stdin: "ignore" });
    try {
      // up once it answers on its socket (a socket file alone may not be listening yet)
      const probe = new RawBridgeClient({ path: other.socketPath }, 5_000);
      await eventually(() => probe.call("bridge.status", {}).then(() => true, () => false), 25);
      const r = await runDoctor(other, [], privateHome(other, process.platform === "linux"));
      expect(r.code).toBe(1);
      if (process.platform === "linux") {
        expect(r.line("bridge version")).toBe(
          `bridge version: FAIL -- the Bridge runs serverfs 0.0.0-older, this binary is ${pkg.version}; fix: restart the Bridge so it runs this version: serverfs service stop, then serverfs service start`,
        );
      }
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 30_000);
});
