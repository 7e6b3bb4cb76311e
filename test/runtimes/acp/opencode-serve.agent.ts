// The whole chain an assistant uses, with a real agent: an MCP client speaks to a real
// `serverfs serve` process over stdio; serve's agent tools reach a real `serverfs bridge` process
// over its unix socket; the Bridge drives OpenCode (opencode-ai 1.18.33) over ACP; OpenCode talks
// to a scripted OpenAI-compatible model on 127.0.0.1. Nothing is in-process.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { startFakeModel, type FakeModel } from "../../fixtures/acp/fake-model.ts";
import { OPENCODE, OPENCODE_SUPPORTED, writeOpenCodeEnv } from "../../fixtures/acp/opencode-env.ts";
import { deploymentPaths } from "../../../src/config/paths.ts";
import { spawnBridgeProcess, type BridgeProcess } from "../../support/bridge-process.ts";
import { connectServe } from "../../support/mcp.ts";
import { pidAlive, processesWithHome, waitForLines } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";

let model: FakeModel;
let base: string;
let home: string;
let workdir: string;
let config: string;
let bridge: BridgeProcess | null = null;
let mcp: Client;

type Task = Record<string, unknown> & { task_id: string; status: string };
type Pending = { request_id: string; payload: { response_options: Array<{ option_id: string; kind: string }> } };

async function startBridge(): Promise<void> {
  bridge = await spawnBridgeProcess(config, deploymentPaths({ server: { state_dir: path.join(base, "state") } }).socketPath, { stderr: "ignore", clientTimeoutMs: 2000 });
}

async function stopBridge(): Promise<void> {
  if (!bridge) return;
  expect(await bridge.stop()).toBe(0);
  bridge = null;
}

async function tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent)}`);
  return r.structuredContent as Record<string, unknown>;
}

async function submit(prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await tool("submit_agent_task", { runtime: "acp-opencode", workdir: "app", prompt, ...extra });
  return r.task_id as string;
}

/** get_agent_task with wait_seconds: returns on any change, so this loop does not poll busily. */
async function waitFor(id: string, pred: (t: Task) => boolean, timeoutMs = 90_000): Promise<Task> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const t = (await tool("get_agent_task", { task_id: id, wait_seconds: 5 })) as Task;
    if (pred(t)) return t;
    if (Date.now() > until) throw new Error(`timed out: ${id} is ${t.status}`);
  }
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);
const terminal = (id: string) => waitFor(id, (t) => TERMINAL.has(t.status));

async function approval(id: string): Promise<Pending> {
  const t = await waitFor(id, (v) => v.status === "waiting_for_approval" || TERMINAL.has(v.status));
  expect(t.status).toBe("waiting_for_approval");
  return t.pending_request as Pending;
}

const optionOfKind = (req: Pending, kind: string) => req.payload.response_options.find((o) => o.kind === kind)!.option_id;

describe.skipIf(!OPENCODE_SUPPORTED)("serve → Bridge → ACP → OpenCode, all real processes", () => {
  beforeAll(async () => {
    model = startFakeModel();
    base = tempDir("serverfs-serve-acp-");
    home = path.join(base, "home");
    workdir = path.join(base, "app");
    fs.mkdirSync(home);
    fs.mkdirSync(workdir);
    const envFile = writeOpenCodeEnv(base, home, model.baseUrl);
    config = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      config,
      [
        "[server]",
        `state_dir = "${path.join(base, "state")}"`,
        "[[workdirs]]",
        'alias = "app"',
        `path = "${workdir}"`,
        "read_only = false",
        'agent_mode = "workspace-write"',
        'agent_runtimes = ["acp-opencode"]',
        "[agent]",
        "enabled = true",
        `provider_env_file = "${envFile}"`,
        "[[agent.acp_profiles]]",
        'id = "opencode"',
        `command = "${OPENCODE}"`,
        'args = ["acp"]',
        "",
      ].join("\n"),
    );
    await startBridge();
    ({ client: mcp } = await connectServe({ args: ["--config", config], clientName: "e2e", listTools: false }));
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await stopBridge();
    model?.stop();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test("serve lists the agent tools and the ACP runtime, unmeasured until a task runs", async () => {
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["submit_agent_task", "get_agent_task", "respond_agent_approval", "cancel_agent_task"]));
    const runtimes = (await tool("list_agent_runtimes", {})).runtimes as Array<Record<string, unknown>>;
    expect(runtimes.map((r) => [r.name, r.capability_state])).toEqual([["acp-opencode", "unmeasured"]]);
  });

  test("prompt → result", async () => {
    const id = await submit("hello through serve");
    const done = await terminal(id);
    expect({ status: done.status, error: done.error_code }).toEqual({ status: "succeeded", error: null });
    expect(done.final_response).toBe("echo: hello through serve");
    expect(processesWithHome(home)).toEqual([]);
  }, 120_000);

  test("permission round trip by option_id: allow_once writes the file; serve's own write is WORKDIR_BUSY while the task holds the lease", async () => {
    const target = path.join(workdir, "from-agent.txt");
    const id = await submit(`WRITE ${target} written through serve and ACP`);
    const req = await approval(id);
    // The task holds the workdir's writer lease: serve's own mutation is refused, nothing written.
    const busy = (await mcp.callTool({ name: "create_text_file", arguments: { workdir: "app", path: "mine.txt", content: "x" } })) as CallToolResult;
    expect((busy.structuredContent as { code: string }).code).toBe("WORKDIR_BUSY");
    expect(fs.existsSync(path.join(workdir, "mine.txt"))).toBe(false);
    await tool("respond_agent_approval", { task_id: id, request_id: req.request_id, option_id: optionOfKind(req, "allow_once") });
    expect((await terminal(id)).status).toBe("succeeded");
    expect(fs.readFileSync(target, "utf8")).toBe("written through serve and ACP");
    // The lease is free again once the task is done and its processes are proved gone.
    await tool("create_text_file", { workdir: "app", path: "mine.txt", content: "x" });
    expect(fs.readFileSync(path.join(workdir, "mine.txt"), "utf8")).toBe("x");
  }, 120_000);

  test("a forged option_id is refused and the request stays pending; reject_once writes nothing", async () => {
    const target = path.join(workdir, "rejected.txt");
    const id = await submit(`WRITE ${target} must not exist`);
    const req = await approval(id);
    const forged = (await mcp.callTool({
      name: "respond_agent_approval",
      arguments: { task_id: id, request_id: req.request_id, option_id: "allow-everything-forever" },
    })) as CallToolResult;
    expect((forged.structuredContent as { code: string }).code).toBe("INVALID_APPROVAL_DECISION");
    expect(((await tool("get_agent_task", { task_id: id })) as Task).status).toBe("waiting_for_approval");
    await tool("respond_agent_approval", { task_id: id, request_id: req.request_id, option_id: optionOfKind(req, "reject_once") });
    expect(["succeeded", "failed"]).toContain((await terminal(id)).status);
    expect(fs.existsSync(target)).toBe(false);
    expect(processesWithHome(home)).toEqual([]);
  }, 120_000);

  test("cancel during a running shell tool: cancelled, zero processes survive, then the workdir is free", async () => {
    const pids = path.join(base, "pids.txt");
    const id = await submit(`SHELL sleep 300 & echo $! > ${pids}; sleep 301 & echo $! >> ${pids}; echo $$ >> ${pids}; wait`);
    const req = await approval(id);
    await tool("respond_agent_approval", { task_id: id, request_id: req.request_id, option_id: optionOfKind(req, "allow_once") });
    const toolPids = (await waitForLines(pids, 3, 60_000, "the shell tool never started")).map(Number);
    expect(toolPids.every(pidAlive)).toBe(true);
    expect((await tool("cancel_agent_task", { task_id: id })).status).toBe("cancelled");
    const stopBy = Date.now() + 20_000;
    while ((toolPids.some(pidAlive) || processesWithHome(home).length > 0) && Date.now() < stopBy) await Bun.sleep(100);
    expect(toolPids.filter(pidAlive)).toEqual([]);
    expect(processesWithHome(home)).toEqual([]);
    expect(((await tool("get_agent_task", { task_id: id })) as Task).status).toBe("cancelled");
    // Cancelled is terminal at once; the writer lease follows only once the stop is proved.
    // serve's own write gets WORKDIR_BUSY until then, and must succeed soon after.
    let code = "WORKDIR_BUSY";
    while (code === "WORKDIR_BUSY") {
      const r = (await mcp.callTool({ name: "create_text_file", arguments: { workdir: "app", path: "after-cancel.txt", content: "free" } })) as CallToolResult;
      code = r.isError ? (r.structuredContent as { code: string }).code : "OK";
      if (code === "WORKDIR_BUSY") await Bun.sleep(100);
    }
    expect(code).toBe("OK");
    expect(fs.readFileSync(path.join(workdir, "after-cancel.txt"), "utf8")).toBe("free");
  }, 120_000);

  test("continuation after a Bridge restart: a new Bridge process continues the persisted session", async () => {
    const first = await submit("remember the word MANGO");
    expect((await terminal(first)).status).toBe("succeeded");
    await stopBridge();
    await startBridge();
    const seen = model.requests.length;
    const second = await submit("RECALL", { continue_from_task_id: first });
    const done = await terminal(second);
    expect(done.status).toBe("succeeded");
    expect(done.final_response).toContain("remember the word MANGO");
    const later = model.requests.slice(seen).filter((r) => r.tools.length > 0);
    expect(JSON.stringify(later[0]!.messages)).toContain("MANGO");
  }, 120_000);
});
