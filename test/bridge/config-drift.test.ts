// The configuration drifting under a running Bridge, end to end with real processes: a `serverfs
// bridge` started on a file, then the file edited (a workdir added, another re-pointed) and a
// fresh `serverfs serve` on the edited file, as an MCP host starts one per session. Submits from
// it are refused with AGENT_BRIDGE_CONFIG_STALE and the fix; no task row is written and no turn
// runs, so nothing runs in a directory the current file does not name. doctor says the same
// before any submit. An edit only serve uses, and a caller that sends no identity (an older
// serve), are still served.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { connectServe, type ServeClient } from "../support/mcp.ts";
import { makeDeployment, runDoctor, startBridge, type BridgeProcess, type Deployment } from "../doctor/helpers.ts";
import { turnCount } from "./helpers.ts";

// real Bridge and serve processes from source on a loaded machine: a ceiling, not a timing assertion
setDefaultTimeout(120_000);

const STALE_FIX =
  "restart the Bridge: serverfs service stop, then serverfs service start (or stop and start 'serverfs bridge --config FILE' by hand)";

let d: Deployment;
let bridge: BridgeProcess;
let original = "";
let elsewhere = "";
const serves: ServeClient[] = [];

async function serve(): Promise<ServeClient> {
  const s = await connectServe({ args: ["--config", d.config], clientName: "drift-test" });
  serves.push(s);
  return s;
}

function structured(r: CallToolResult): Record<string, unknown> {
  return r.structuredContent as Record<string, unknown>;
}

async function runToEnd(s: ServeClient, workdir: string, prompt: string): Promise<Record<string, unknown>> {
  const r = await s.call("submit_agent_task", { runtime: "fake", workdir, prompt });
  expect(r.isError).toBeFalsy();
  const id = structured(r).task_id as string;
  let view = structured(await s.call("get_agent_task", { task_id: id, wait_seconds: 30 }));
  while (view.status !== "succeeded" && view.status !== "failed") view = structured(await s.call("get_agent_task", { task_id: id, wait_seconds: 30 }));
  return view;
}

async function taskCount(): Promise<number> {
  return (await bridge.client.call("task.list", { limit: 500 })).tasks.length;
}

const turnLog = () => path.join(d.root, "turns.log");

beforeAll(async () => {
  d = makeDeployment({ aliases: ["app", "docs"] });
  original = fs.readFileSync(d.config, "utf8");
  elsewhere = path.join(d.root, "elsewhere");
  fs.mkdirSync(elsewhere);
  bridge = await startBridge(d);
});

afterAll(async () => {
  for (const s of serves) await s.close();
  await bridge?.stop();
  fs.rmSync(d.root, { recursive: true, force: true });
});

describe("a Bridge started on an older file", () => {
  test("before the edit: the task runs, and doctor says the Bridge runs this file", async () => {
    const s = await serve();
    const view = await runToEnd(s, "app", "complete:first");
    expect([view.status, view.final_response]).toEqual(["succeeded", "first"]);
    expect((await runDoctor(d)).line("bridge configuration")).toBe("bridge configuration: OK -- the Bridge runs the configuration this file describes");
  });

  test("a workdir added and another re-pointed: every submit is refused with the fix, nothing is written or started", async () => {
    const app2 = path.join(d.root, "app2");
    fs.mkdirSync(app2);
    const edited = original
      .replace(`path = ${JSON.stringify(d.workdirs.app!)}`, `path = ${JSON.stringify(elsewhere)}`)
      .replace("[agent]\n", `[[workdirs]]\nalias = "app2"\npath = ${JSON.stringify(app2)}\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n[agent]\n`);
    expect(edited).not.toBe(original);
    fs.writeFileSync(d.config, edited);
    const tasksBefore = await taskCount();
    const turnsBefore = turnCount(turnLog());

    const s = await serve();
    const listed = structured(await s.call("list_workdirs")).workdirs as Array<{ alias: string }>;
    expect(listed.map((w) => w.alias).sort()).toEqual(["app", "app2", "docs"]);
    for (const workdir of ["app2", "app"]) {
      const r = await s.call("submit_agent_task", { runtime: "fake", workdir, prompt: "complete:must-not-run" });
      expect(r.isError).toBe(true);
      const sc = structured(r) as { code: string; message: string };
      expect(sc.code).toBe("AGENT_BRIDGE_CONFIG_STALE");
      expect(sc.message).toBe(`the Agent Bridge is running another configuration than this one (the file changed since the Bridge started); ${STALE_FIX}`);
      expect((r.content as Array<{ text: string }>)[0]!.text).toStartWith("AGENT_BRIDGE_CONFIG_STALE: ");
      expect(sc.message).not.toContain(d.root);
    }
    expect(await taskCount()).toBe(tasksBefore);
    expect(turnCount(turnLog())).toBe(turnsBefore);
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(fs.readdirSync(app2)).toEqual([]);

    const doctor = await runDoctor(d);
    expect(doctor.line("bridge configuration")).toBe(
      "bridge configuration: FAIL -- the Bridge runs another configuration than this file (its workdirs or [agent] section changed since it started); agent tools answer AGENT_BRIDGE_CONFIG_STALE until it is restarted; fix: restart the Bridge: serverfs service stop, then serverfs service start (or stop and start serverfs bridge --config FILE by hand)",
    );
    expect(doctor.code).toBe(1);
  });

  test("a caller that sends no identity (a serve older than this check) is still served", async () => {
    const r = await bridge.client.call("task.submit", { runtime: "fake", workdir: "app", path: "", profile: "review", prompt: "complete:old-client" });
    expect(r.status).toBe("queued");
  });

  test("back on the Bridge's file, plus an edit only serve uses: submits run again; an [agent] timeout edit is a doctor WARN only", async () => {
    const serveOnly = original.replace("[agent]\n", `[[workdirs]]\nalias = "notes"\npath = ${JSON.stringify(elsewhere)}\n[agent]\n`);
    fs.writeFileSync(d.config, serveOnly.replace(`[server]\n`, `[server]\nlog_level = "DEBUG"\n`));
    const s = await serve();
    const view = await runToEnd(s, "app", "complete:again");
    expect([view.status, view.final_response]).toEqual(["succeeded", "again"]);
    expect((await runDoctor(d)).line("bridge configuration")).toBe("bridge configuration: OK -- the Bridge runs the configuration this file describes");

    fs.writeFileSync(d.config, original.replace("[agent]\n", "[agent]\ntask_timeout_seconds = 3600\n"));
    const timeoutEdit = await serve();
    const after = await runToEnd(timeoutEdit, "app", "complete:timeouts");
    expect(after.status).toBe("succeeded");
    expect((await runDoctor(d)).line("bridge configuration")).toBe(
      "bridge configuration: WARN -- the Bridge runs this file's workdirs and runtimes, but older [agent] timeouts or caps: the edit applies once the Bridge restarts; note: restart the Bridge: serverfs service stop, then serverfs service start (or stop and start serverfs bridge --config FILE by hand)",
    );
  });
});
