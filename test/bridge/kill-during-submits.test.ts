// SIGKILL a real `serverfs bridge` process while 20 submits with idempotency keys are in flight on
// its real socket, then start it again on the same state directory (docs/agent-bridge.md,
// "Shutdown, crash and restart"). A submit the Bridge acknowledged is there exactly once: one row
// in the database, one entry in task.list, and the same task when its key is retried. A submit it
// never acknowledged is absent or there once, never twice. Nothing runs twice: the fake provider
// appends one line per run to a log file on disk, and no task id appears in it more than once.
//
// The kill happens at an observable point, not after a delay: the moment the tenth
// acknowledgement arrives, with the other submits sent and unanswered (an answer already in the
// socket when the kill lands still reaches the client, and counts as acknowledged).
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import { spawnBridgeProcess } from "../support/bridge-process.ts";
import { TERMINAL } from "../support/bridge-rig.ts";
import { cleanup, makeRegistry, makeWorkdir, tempDir } from "./helpers.ts";

const SUBMITS = 20;
const KILL_AT_ACK = 10;

const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanup));

function deployment() {
  const root = tempDir("sfs-kill-");
  dirs.push(root);
  const repo = path.join(root, "repo");
  fs.mkdirSync(repo);
  const stateDir = path.join(root, "state");
  const config = path.join(root, "serverfs.toml");
  // review tasks take no writer lease, so all twenty are admitted side by side
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${stateDir}"\n[[workdirs]]\nalias = "repo"\npath = "${repo}"\nread_only = false\n` +
      `agent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n[agent]\nenabled = true\nenable_fake_runtime = true\nmax_active_tasks = ${SUBMITS * 2}\n`,
  );
  const paths = bridgePaths(makeRegistry(stateDir, [makeWorkdir("repo", repo)]));
  return { config, paths, turnLog: path.join(root, "turns.log") };
}

const submitParams = (i: number) => ({ runtime: "fake", workdir: "repo", path: "", profile: "review", prompt: `complete:task ${i}`, idempotency_key: `key-${i}` });

/** Rows per idempotency key, read straight from the database file (tasks and the idempotency table). */
function rowsByKey(dbPath: string): Map<string, { tasks: string[]; idem: string[] }> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const out = new Map<string, { tasks: string[]; idem: string[] }>();
    const at = (k: string) => out.get(k) ?? (out.set(k, { tasks: [], idem: [] }), out.get(k)!);
    for (const r of db.query("SELECT idempotency_key AS k, task_id AS t FROM tasks WHERE idempotency_key IS NOT NULL").all() as Array<{ k: string; t: string }>) at(r.k).tasks.push(r.t);
    for (const r of db.query("SELECT idempotency_key AS k, task_id AS t FROM idempotency").all() as Array<{ k: string; t: string }>) at(r.k).idem.push(r.t);
    return out;
  } finally {
    db.close();
  }
}

/** Provider runs per task id, from the fake provider's own log ("<task id> <pid>" per run). */
function runsByTask(turnLog: string): Map<string, number> {
  const runs = new Map<string, number>();
  const text = fs.existsSync(turnLog) ? fs.readFileSync(turnLog, "utf8") : "";
  for (const line of text.split("\n").filter(Boolean)) {
    const id = line.split(" ")[0]!;
    runs.set(id, (runs.get(id) ?? 0) + 1);
  }
  return runs;
}

describe("SIGKILL during concurrent submits", () => {
  test("after a restart every acknowledged submit is there exactly once, none twice, and nothing is re-run", async () => {
    const d = deployment();
    const env = { SERVERFS_FAKE_TURN_LOG: d.turnLog };
    const first = await spawnBridgeProcess(d.config, d.paths.socketPath, { env });

    const acked = new Map<string, string>(); // idempotency key -> task id
    let killed = false;
    const outcomes = await Promise.allSettled(
      Array.from({ length: SUBMITS }, (_, i) =>
        first.client.call("task.submit", submitParams(i)).then((r) => {
          // an answer already on its way when the kill lands is an acknowledgement too
          acked.set(`key-${i}`, r.task_id as string);
          if (!killed && acked.size === KILL_AT_ACK) {
            killed = true;
            first.proc.kill("SIGKILL");
          }
          return r;
        }),
      ),
    );
    if (!killed) first.proc.kill("SIGKILL"); // fewer acknowledgements than expected: fail below, do not hang
    await first.proc.exited;
    expect(first.proc.signalCode).toBe("SIGKILL");
    expect(killed).toBe(true);
    // every submit not answered was cut off by the kill
    expect(acked.size).toBeGreaterThanOrEqual(KILL_AT_ACK);
    expect(outcomes.filter((o) => o.status === "rejected").length).toBe(SUBMITS - acked.size);

    const second = await spawnBridgeProcess(d.config, d.paths.socketPath, { env });
    try {
      const rows = rowsByKey(d.paths.dbPath);
      for (const [key, taskId] of acked) expect({ key, ...rows.get(key) }).toEqual({ key, tasks: [taskId], idem: [taskId] });
      for (let i = 0; i < SUBMITS; i++) {
        const r = rows.get(`key-${i}`) ?? { tasks: [], idem: [] };
        expect(r.tasks.length).toBeLessThanOrEqual(1);
        expect(r.idem).toEqual(r.tasks);
      }

      const listed = ((await second.client.call("task.list", { limit: 100 })).tasks as Array<{ task_id: string }>).map((t) => t.task_id);
      const inDb = [...rows.values()].flatMap((r) => r.tasks);
      expect([...listed].sort()).toEqual([...inDb].sort());
      expect(new Set(listed).size).toBe(listed.length);
      for (const taskId of acked.values()) expect(listed.filter((t) => t === taskId)).toEqual([taskId]);

      // A client retrying every key after the restart gets the acknowledged task back, and at most
      // one task per key exists afterwards.
      for (let i = 0; i < SUBMITS; i++) {
        const again = (await second.client.call("task.submit", submitParams(i))).task_id as string;
        const known = acked.get(`key-${i}`) ?? rows.get(`key-${i}`)?.tasks[0];
        if (known !== undefined) expect(again).toBe(known);
      }
      const after = rowsByKey(d.paths.dbPath);
      for (let i = 0; i < SUBMITS; i++) expect(after.get(`key-${i}`)?.tasks.length).toBe(1);

      // Let every task end (those alive at the kill were interrupted at start-up; retried new ones run).
      const all = [...after.values()].map((r) => r.tasks[0]!);
      for (const taskId of all) {
        let t = await second.client.call("task.get", { task_id: taskId });
        while (!TERMINAL.has(t.status as string)) t = await second.client.call("task.get", { task_id: taskId, wait_seconds: 5 });
        // a task alive at the kill is never re-run: the restart ends it interrupted
        if (t.status === "interrupted") expect(t.error_code).toBe("BRIDGE_RESTARTED");
        else expect(t.status).toBe("succeeded");
      }
      // no task's provider ran more than once, across both Bridge processes
      const runs = runsByTask(d.turnLog);
      for (const [taskId, n] of runs) expect({ taskId, n }).toEqual({ taskId, n: 1 });
      for (const taskId of runs.keys()) expect(all).toContain(taskId);
    } finally {
      await second.stop();
    }
  }, 90_000);
});
