// A real `serverfs bridge` process whose state directory is a small tmpfs, mounted in a private
// mount namespace (unshare -m) so nothing outside this test sees it. The test reaches the
// Bridge's socket, database and spool through /proc/<bridge pid>/root, i.e. as the Bridge sees
// them. With the filesystem filled until only a little room is left, a task whose result must be
// spooled ends failed with NO_SPACE_LEFT; its partial spool file is gone; the failure is recorded
// (the room the partial file took was given back first); the database passes integrity_check; and
// the Bridge goes on answering and running tasks (docs/agent-bridge.md, "What the caller sees").
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import { RawBridgeClient as BridgeClient } from "../../src/bridge/ipc/client.ts";
import { taskDriver, type TaskDriver } from "../support/bridge-rig.ts";
import { BUN, CLI } from "../support/proc.ts";
import { cleanup, makeRegistry, makeWorkdir, tempDir } from "./helpers.ts";

/** The tmpfs's size: room for the database and a few tasks, not for a 2 MiB result. */
const TMPFS_BYTES = 8 * 1024 * 1024;
/** What is left free once the filler has taken the rest: less than the result, more than the failure's rows need. */
const LEFT_FREE = 512 * 1024;
/** Above the 256 KiB spool threshold, so it must be spooled; far above LEFT_FREE. */
const RESULT_BYTES = 2 * 1024 * 1024;

function canMountPrivately(): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  const probe = tempDir("sfs-nsp-");
  try {
    return Bun.spawnSync(["unshare", "-m", "--propagation", "private", "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]).exitCode === 0;
  } finally {
    cleanup(probe);
  }
}

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

interface NamespacedBridge {
  pid: number;
  /** A path as the Bridge sees it, reachable from here. */
  inside(p: string): string;
  driver: TaskDriver;
  proc: ReturnType<typeof Bun.spawn>;
}

async function startOnTmpfs(): Promise<{ b: NamespacedBridge; stateDir: string; spoolDir: string; dbPath: string }> {
  const root = tempDir("sfs-nsp-");
  dirs.push(root);
  const repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  const stateDir = path.join(root, "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  const config = path.join(root, "serverfs.toml");
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${stateDir}"\n[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\n` +
      `agent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n[agent]\nenabled = true\nenable_fake_runtime = true\n`,
  );
  const paths = bridgePaths(makeRegistry(stateDir, [makeWorkdir("repo", repo)]));
  // unshare and sh exec in turn, so the spawned pid is the Bridge's own
  const script = 'mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$2" && exec "$3" "$4" bridge --config "$5"';
  const proc = Bun.spawn(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", String(TMPFS_BYTES), stateDir, BUN, CLI, config], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const inside = (p: string) => `/proc/${proc.pid}/root${p}`;
  const client = new BridgeClient({ path: inside(paths.socketPath) }, 30_000);
  const driver = taskDriver((method, params) => client.call(method, params), Number.POSITIVE_INFINITY);
  // ready once it answers (a connection refused or a missing socket until then)
  for (let tries = 0; ; tries++) {
    if (proc.exitCode !== null) throw new Error(`bridge exited: ${await new Response(proc.stderr as ReadableStream).text()}`);
    try {
      await client.call("bridge.status", {});
      break;
    } catch {
      if (tries > 400) throw new Error("bridge did not answer");
      await Bun.sleep(25);
    }
  }
  return { b: { pid: proc.pid, inside, driver, proc }, stateDir, spoolDir: paths.spoolDir, dbPath: paths.dbPath };
}

/** integrity_check and the task's row, read by a process that joins the Bridge's mount namespace. */
function sqliteInside(pid: number, dbPath: string, taskId: string): unknown {
  const script = `
    const { Database } = require("bun:sqlite");
    const db = new Database(process.env.SFS_DB, { readonly: true });
    const integrity = db.query("PRAGMA integrity_check").all();
    const row = db.query("SELECT status, error_code, result_storage FROM tasks WHERE task_id = ?").get(process.env.SFS_TASK);
    db.close();
    console.log(JSON.stringify({ integrity, row }));`;
  const r = Bun.spawnSync(["nsenter", `--mount=/proc/${pid}/ns/mnt`, BUN, "-e", script], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, SFS_DB: dbPath, SFS_TASK: taskId },
  });
  if (r.exitCode !== 0) throw new Error(`sqlite check failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

/** Fill the filesystem at `dir` completely with one file, then give back `leave` bytes of it. */
function fillLeaving(dir: string, leave: number): string {
  const filler = path.join(dir, "filler");
  const fd = fs.openSync(filler, "w", 0o600);
  const chunk = Buffer.alloc(64 * 1024, 0x5a);
  let size = 0;
  try {
    for (;;) size += fs.writeSync(fd, chunk);
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOSPC") throw err;
  }
  fs.ftruncateSync(fd, Math.max(0, size - leave));
  fs.closeSync(fd);
  return filler;
}

const mountable = canMountPrivately();
if (!mountable) console.warn("full-state-filesystem test skipped: it needs root on Linux and a tmpfs mount in a private mount namespace (unshare -m)");

describe.skipIf(!mountable)("the Bridge's state directory on a full filesystem", () => {
  test("a result that cannot be spooled fails the task NO_SPACE_LEFT; nothing partial is left and the Bridge keeps working", async () => {
    const { b, stateDir, spoolDir, dbPath } = await startOnTmpfs();
    try {
      const submit = async (prompt: string) =>
        (await b.driver.call("task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "workspace-write", prompt })).task_id as string;
      fillLeaving(b.inside(stateDir), LEFT_FREE);
      const free = fs.statfsSync(b.inside(stateDir));
      expect(free.bavail * free.bsize).toBeLessThan(RESULT_BYTES);

      const id = await submit(`repeat:${RESULT_BYTES}:x`);
      const done = await b.driver.waitTerminal(id);
      expect(done.status).toBe("failed");
      expect(done.error_code).toBe("NO_SPACE_LEFT");
      expect(done.error_message).toBe(`the result (${RESULT_BYTES} bytes) could not be spooled: the state directory's filesystem is full`);
      expect(done.result).toBeNull();
      expect((await b.driver.events(id)).map((e) => e.event_type)).not.toContain("task.result_spooled");
      // no spool file and no temp file of one (publishFileAtomic's ".…serverfs-tmp-…")
      expect(fs.readdirSync(b.inside(spoolDir))).toEqual([]);

      // the Bridge still answers, and still runs a task whose result fits inline
      expect((await b.driver.call("bridge.status", {})).pid).toBe(b.pid);
      const small = await submit("complete:still working");
      expect(await b.driver.waitTerminal(small)).toMatchObject({ status: "succeeded", final_response: "still working" });

      // SQLite resolves symbolic links in a database path (/proc/<pid>/root is one), so the
      // database is read from inside the Bridge's mount namespace
      expect(sqliteInside(b.pid, dbPath, id)).toEqual({
        integrity: [{ integrity_check: "ok" }],
        row: { status: "failed", error_code: "NO_SPACE_LEFT", result_storage: null },
      });
    } finally {
      b.proc.kill("SIGTERM");
      await b.proc.exited;
    }
  }, 60_000);
});
