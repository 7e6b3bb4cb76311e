// A real ACP agent end to end: OpenCode (opencode-ai 1.18.33, a devDependency that ships its
// binary as an optionalDependency) as profile `acp-opencode` behind the real Bridge service, with a
// scripted OpenAI-compatible model on 127.0.0.1 (docs/maintainers/testing.md). Its settings reach it the
// way an operator's would: through the Bridge's private provider env file. Nothing here or in the
// adapter knows it is OpenCode.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { acpFingerprint } from "../../../src/config/fingerprint.ts";
import type { AcpProfile } from "../../../src/config/types.ts";
import { startFakeModel, type FakeModel } from "../../fixtures/acp/fake-model.ts";
import { OPENCODE, OPENCODE_SUPPORTED, writeOpenCodeEnv } from "../../fixtures/acp/opencode-env.ts";
import { pidAlive, processesWithHome, waitForLines } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";
import { startAcpRig, type ServiceRig } from "../service-rig.ts";

const supported = OPENCODE_SUPPORTED;

let model: FakeModel;
let base: string;
let envFile: string;
let home: string;
let rig: ServiceRig | null = null;

function profile(): AcpProfile {
  const p = { id: "opencode", command: OPENCODE, args: ["acp"], use_proxy: false };
  return { ...p, runtime: "acp-opencode", probe_timeout_seconds: 60, shutdown_timeout_seconds: 5, fingerprint: acpFingerprint(p) };
}

/** Every live process started with this suite's private HOME (the agent, its tools, their children). */
function processesWithOurHome(): number[] {
  return processesWithHome(home).map((p) => p.pid);
}

async function waitApproval(id: string): Promise<{ request_id: string; payload: { response_options: Array<{ option_id: string; kind: string }> } }> {
  const t = await rig!.waitFor(id, (v) => v.status === "waiting_for_approval" || v.status === "failed" || v.status === "succeeded", 60_000);
  expect(t.status).toBe("waiting_for_approval");
  return t.pending_request as { request_id: string; payload: { response_options: Array<{ option_id: string; kind: string }> } };
}

const optionOfKind = (req: { payload: { response_options: Array<{ option_id: string; kind: string }> } }, kind: string) =>
  req.payload.response_options.find((o) => o.kind === kind)!.option_id;

describe.skipIf(!supported)("OpenCode over ACP through the Bridge", () => {
  beforeAll(() => {
    model = startFakeModel();
    base = tempDir("serverfs-opencode-");
    home = path.join(base, "home");
    fs.mkdirSync(home);
    envFile = writeOpenCodeEnv(base, home, model.baseUrl);
  });
  afterEach(async () => {
    await rig?.stop();
    rig = null;
  });
  afterAll(() => {
    model.stop();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test("the binary is installed (opencode-ai 1.18.33)", () => {
    expect(fs.existsSync(OPENCODE)).toBe(true);
    const out = Bun.spawnSync([OPENCODE, "--version"], { env: { PATH: process.env.PATH ?? "", HOME: home } });
    expect(new TextDecoder().decode(out.stdout).trim()).toBe("1.18.33");
  });

  test("prompt → result, measured capabilities, nothing left running", async () => {
    rig = await startAcpRig([profile()], { provider_env_file: envFile });
    const id = await rig.submit("acp-opencode", "hello there");
    const done = await rig.waitTerminal(id, 90_000);
    expect({ status: done.status, error: done.error_code }).toEqual({ status: "succeeded", error: null });
    expect(done.final_response).toBe("echo: hello there");
    const info = ((await rig.call("runtime.list")).runtimes as Array<Record<string, unknown>>)[0]!;
    expect(info).toMatchObject({ capability_state: "measured", persistent_session: true, model_override: true, version: "1.18.33" });
    expect(processesWithOurHome()).toEqual([]);
  }, 120_000);

  test("permission round trip by option_id: allow_once writes the file", async () => {
    rig = await startAcpRig([profile()], { provider_env_file: envFile });
    const target = path.join(rig.workdir, "from-agent.txt");
    const id = await rig.submit("acp-opencode", `WRITE ${target} written through ACP`);
    const req = await waitApproval(id);
    expect(new Set(req.payload.response_options.map((o) => o.kind))).toEqual(new Set(["allow_once", "allow_always", "reject_once"]));
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, option_id: optionOfKind(req, "allow_once") });
    const done = await rig.waitTerminal(id, 90_000);
    expect(done.status).toBe("succeeded");
    expect(fs.readFileSync(target, "utf8")).toBe("written through ACP");
    // OpenCode calls fs/write_text_file although we advertised no fs capability: refused, recorded.
    const refused = (await rig.events(id)).filter((e) => e.event_type === "acp.request_refused").map((e) => e.payload.method);
    expect(refused.every((m) => m === "fs/write_text_file")).toBe(true);
  }, 120_000);

  test("reject_once: nothing is written", async () => {
    rig = await startAcpRig([profile()], { provider_env_file: envFile });
    const target = path.join(rig.workdir, "rejected.txt");
    const id = await rig.submit("acp-opencode", `WRITE ${target} must not exist`);
    const req = await waitApproval(id);
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, option_id: optionOfKind(req, "reject_once") });
    const done = await rig.waitTerminal(id, 90_000);
    expect(["succeeded", "failed"]).toContain(done.status as string);
    expect(fs.existsSync(target)).toBe(false);
    expect(processesWithOurHome()).toEqual([]);
  }, 120_000);

  test("cancel during a running shell tool: cancelled, and zero processes survive", async () => {
    rig = await startAcpRig([profile()], { provider_env_file: envFile });
    const pids = path.join(rig.root, "pids.txt");
    const id = await rig.submit("acp-opencode", `SHELL sleep 300 & echo $! > ${pids}; sleep 301 & echo $! >> ${pids}; echo $$ >> ${pids}; wait`);
    const req = await waitApproval(id);
    await rig.call("task.approval.respond", { task_id: id, request_id: req.request_id, option_id: optionOfKind(req, "allow_once") });
    const toolPids = (await waitForLines(pids, 3, 60_000, "the shell tool never started")).map(Number);
    expect(toolPids.every(pidAlive)).toBe(true);
    expect(processesWithOurHome().length).toBeGreaterThan(0);
    const cancelled = await rig.call("task.cancel", { task_id: id });
    expect(cancelled.status).toBe("cancelled");
    const stopBy = Date.now() + 20_000;
    while ((toolPids.some(pidAlive) || processesWithOurHome().length > 0) && Date.now() < stopBy) await Bun.sleep(100);
    expect(toolPids.filter(pidAlive)).toEqual([]);
    expect(processesWithOurHome()).toEqual([]);
    expect((await rig.call("task.get", { task_id: id })).status).toBe("cancelled");
  }, 120_000);

  test("continuation of a persisted session in a new process: the model sees the earlier turn", async () => {
    rig = await startAcpRig([profile()], { provider_env_file: envFile });
    const first = await rig.submit("acp-opencode", "remember the word PINEAPPLE");
    expect((await rig.waitTerminal(first, 90_000)).status).toBe("succeeded");
    const seen = model.requests.length;
    const second = await rig.submit("acp-opencode", "RECALL", { continue_from_task_id: first });
    const done = await rig.waitTerminal(second, 90_000);
    expect(done.status).toBe("succeeded");
    expect(done.final_response).toBe("history: remember the word PINEAPPLE");
    const laterRequests = model.requests.slice(seen).filter((r) => r.tools.length > 0);
    expect(JSON.stringify(laterRequests[0]!.messages)).toContain("PINEAPPLE");
    // The earlier answer was not replayed into the new task's events.
    const texts = (await rig.events(second)).filter((e) => e.event_type === "agent.message").map((e) => e.payload.text);
    expect(texts).toEqual(["history: remember the word PINEAPPLE"]);
    expect(rig.store.require(second).native_session_id).toBe(rig.store.require(first).native_session_id);
  }, 120_000);
});
