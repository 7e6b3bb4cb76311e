// Both MCP protocol eras from one `serverfs serve`: the SDK v1 client, and the SDK v2 client
// negotiating `legacy`, `auto` (lands in 2026-07-28) and a pin to 2026-07-28. Each lists the
// tools (the same listing, byte for byte, in every era), calls every read tool, reads the
// resource template and runs a fake-runtime task through an approval. Progress notifications
// during a get_agent_task wait and cancellation of a pending wait are shown in each era.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { cleanup, startHarness, type Harness } from "./helpers.ts";
import { code, MODES, ok, open, type Session, waitFor } from "./mcp-clients.ts";
import { FILE_MUTATION_TOOLS, FILE_READ_TOOLS } from "../support/tool-names.ts";

let h: Harness;
let config: string;
let baseline: Array<Record<string, unknown>>;
let v1: Session;

const READ_TOOLS = [
  ...FILE_READ_TOOLS,
  "list_agent_runtimes",
  "list_agent_models",
  "get_agent_task",
  "read_agent_task_events",
  "read_agent_task_result",
];

beforeAll(async () => {
  h = await startHarness({ aliases: ["repo"], agent: { max_active_tasks: 8 } });
  fs.writeFileSync(path.join(h.workdirs.repo!, "notes.md"), "alpha\nneedle here\nomega\n");
  fs.mkdirSync(path.join(h.workdirs.repo!, "src"));
  config = path.join(h.root, "serverfs.toml");
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${h.stateDir}"\n` +
      `[[workdirs]]\nalias = "repo"\npath = "${h.workdirs.repo}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n` +
      `[agent]\nenabled = true\nenable_fake_runtime = true\n`,
  );
  // The v1 session that lists the baseline is the "client v1" suite's session below.
  v1 = await open("v1", config);
  baseline = await v1.listTools();
});
afterAll(async () => {
  await h.stop();
  cleanup(h.root);
});

describe.each(MODES.map((m) => [m]))("client %s", (mode) => {
  let s: Session;
  beforeAll(async () => {
    s = mode === "v1" ? v1 : await open(mode, config);
  });
  afterAll(() => s.close());

  test("lands in its era and lists the same tools, annotations and output schemas", async () => {
    expect(s.era).toBe(mode === "auto" || mode === "pin" ? "modern" : "legacy");
    const tools = await s.listTools();
    expect(tools).toEqual(baseline);
    expect(tools.map((t) => t.name)).toEqual([
      ...FILE_READ_TOOLS,
      ...FILE_MUTATION_TOOLS,
      "list_agent_runtimes", "list_agent_models", "submit_agent_task", "get_agent_task", "read_agent_task_events",
      "read_agent_task_result", "respond_agent_approval", "answer_agent_question", "send_agent_message", "cancel_agent_task",
    ]);
    for (const t of tools) {
      const a = t.annotations as Record<string, unknown>;
      expect([t.name, typeof a.readOnlyHint, typeof a.destructiveHint, typeof a.idempotentHint, a.openWorldHint]).toEqual([t.name, "boolean", "boolean", "boolean", false]);
      expect((t.outputSchema as { type: string }).type).toBe("object");
    }
  });

  test("every read tool answers, with structuredContent and its text mirror; errors stay coded", async () => {
    const called = new Set<string>();
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      called.add(name);
      return s.call(name, args);
    };
    expect((ok(await call("list_workdirs")).workdirs as Array<{ alias: string }>).map((w) => w.alias)).toEqual(["repo"]);
    expect((ok(await call("list_directory", { workdir: "repo", path: "" })).entries as unknown[]).length).toBe(2);
    expect(ok(await call("find_files", { workdir: "repo", pattern: "*.md" })).returned).toBe(1);
    expect(ok(await call("directory_tree", { workdir: "repo" })).returned).toBe(2);
    expect(ok(await call("search_text", { workdir: "repo", query: "needle" })).returned).toBe(1);
    expect(ok(await call("read_text_file", { workdir: "repo", path: "notes.md" })).content).toBe("alpha\nneedle here\nomega\n");
    expect(ok(await call("stat_file", { workdir: "repo", path: "notes.md" })).type).toBe("file");
    expect(ok(await call("read_multiple_files", { workdir: "repo", paths: ["notes.md"] })).returned).toBe(1);
    expect(code(await call("read_media_file", { workdir: "repo", path: "notes.md" }))).toBe("UNSUPPORTED_MEDIA_TYPE");
    expect(code(await s.call("read_text_file", { workdir: "repo", path: "missing.md" }))).toBe("PATH_NOT_FOUND");
    expect(code(await s.call("read_text_file", { workdir: "repo", path: 7 }))).toBe("INVALID_ARGUMENT");
    const runtimes = ok(await call("list_agent_runtimes"));
    expect((runtimes.runtimes as Array<{ name: string }>).map((r) => r.name)).toEqual(["fake"]);
    // No elicitation declared by this client: under `auto` the assistant's tools answer.
    expect(runtimes.approvals).toMatchObject({ setting: "auto", in_force: "tools" });
    ok(await call("list_agent_models", { runtime: "fake" }));

    const id = ok(await s.call("submit_agent_task", { runtime: "fake", workdir: "repo", path: "src", prompt: `approval:make ${mode}` })).task_id as string;
    const waiting = await waitFor(s, id, ["waiting_for_approval"]);
    called.add("get_agent_task");
    const rid = (waiting.pending_request as { request_id: string }).request_id;
    expect(ok(await s.call("respond_agent_approval", { task_id: id, request_id: rid, decision: "approve_once" })).resolved).toBe(true);
    const done = await waitFor(s, id, ["succeeded", "failed"]);
    expect([done.status, done.final_response]).toEqual(["succeeded", "approval=approve_once"]);
    const events = ok(await call("read_agent_task_events", { task_id: id, limit: 500 })).events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    const resolved = events.find((e) => e.event_type === "approval.resolved");
    // The advisor had nothing to say of the fake runtime's approval (docs/agent-bridge.md, "Approval advice").
    expect(resolved?.payload).toEqual({ decision: "approve_once", decided_by: "assistant", advice: { followed: null, option_id: null, rule: "builtin:no-match" } });
    expect(code(await call("read_agent_task_result", { task_id: id }))).toBe("AGENT_RESULT_NOT_RETRIEVABLE");
    expect([...called].sort()).toEqual([...READ_TOOLS].sort());
    // Each call wrote its audit line, in this era too; a caller's path never appears in it. A line
    // may reach stderr after its answer reached the client: wait for them (the test's timeout
    // bounds it) rather than for a fixed time.
    while (!READ_TOOLS.every((name) => s.stderr().includes(`"tool":"${name}"`))) await Bun.sleep(25);
    for (const name of READ_TOOLS) expect(s.stderr()).toContain(`"tool":"${name}"`);
    expect(s.stderr()).not.toContain("missing.md");
  }, 60_000);

  test("the resource template is listed and read, refusals keep their code", async () => {
    expect((await s.templates()).map((t) => t.uriTemplate)).toEqual(["serverfs://{workdir}/{path}"]);
    expect(await s.read("serverfs://repo/notes.md")).toEqual([{ uri: "serverfs://repo/notes.md", mimeType: "text/plain", text: "alpha\nneedle here\nomega\n" }]);
    const err = (await s.read("serverfs://repo/missing.md").catch((e: unknown) => e)) as { code: number; data: unknown };
    expect([err.code, err.data]).toEqual([-32602, { code: "PATH_NOT_FOUND" }]);
  });
});

describe("waits", () => {
  // Every wait asks for the longest allowed, 50 s: one progress notification per 5 s slice that
  // sees no change, so a wait that sat out its 50 s sends 9 or more. What changes the task, or
  // cancels the wait, is the first progress notification (the wait was provably under way); a
  // wait that returns on the change sends fewer, and a cancelled one ends well before its 50 s.
  // The waits are mostly the server's 5 s slices, so the two clients run side by side: each in a
  // workdir of its own (a task holds its workdir's writer lease), on a Bridge of their own (the
  // workdirs of the file above are exactly one).
  let hw: Harness;
  let waitConfig: string;
  beforeAll(async () => {
    hw = await startHarness({ aliases: ["v1", "pin"], agent: { max_active_tasks: 8 } });
    waitConfig = path.join(hw.root, "serverfs.toml");
    fs.writeFileSync(
      waitConfig,
      `[server]\nstate_dir = "${hw.stateDir}"\n` +
        ["v1", "pin"]
          .map((a) => `[[workdirs]]\nalias = "${a}"\npath = "${hw.workdirs[a]}"\nread_only = false\nagent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n`)
          .join("") +
        `[agent]\nenabled = true\nenable_fake_runtime = true\n`,
    );
  });
  afterAll(async () => {
    await hw.stop();
    cleanup(hw.root);
  });

  test.concurrent.each([["v1"], ["pin"]] as const)("client %s: a wait reports progress and returns when the task moves on; a cancelled wait stops early", async (mode) => {
    const s = await open(mode, waitConfig);
    try {
      const id = ok(await s.call("submit_agent_task", { runtime: "fake", workdir: mode, prompt: "approval:make wait" })).task_id as string;
      const pending = await waitFor(s, id, ["waiting_for_approval"], 1);
      const rid = (pending.pending_request as { request_id: string }).request_id;
      const progress: number[] = [];
      let approval: Promise<unknown> | undefined;
      const r = await s.call("get_agent_task", { task_id: id, wait_seconds: 50 }, {
        onprogress: (p) => {
          progress.push(p.progress);
          approval ??= s.call("respond_agent_approval", { task_id: id, request_id: rid, decision: "approve_once" });
        },
        timeout: 60_000,
      });
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress.length).toBeLessThan(9); // returned on the change, not at the end of its 50 s
      expect(approval).toBeDefined();
      await approval;
      expect(["running", "succeeded"]).toContain(ok(r).status as string);
      expect((await waitFor(s, id, ["succeeded"], 1)).final_response).toBe("approval=approve_once");

      const slow = ok(await s.call("submit_agent_task", { runtime: "fake", workdir: mode, prompt: "wait:" })).task_id as string;
      await waitFor(s, slow, ["running"], 1);
      const abort = new AbortController();
      const cancelled = s.call("get_agent_task", { task_id: slow, wait_seconds: 50 }, { signal: abort.signal, onprogress: () => abort.abort(), timeout: 60_000 });
      expect(await cancelled.then(() => "answered", () => "rejected")).toBe("rejected");
      // The server stopped waiting (its next slice check) and wrote the call's one audit line,
      // long before the 50 s it was asked to wait.
      const audit = `"tool":"get_agent_task","task_id":"${slow}","wait_seconds":50`;
      while (!s.stderr().includes(audit)) await Bun.sleep(100);
      const line = s.stderr().split("\n").find((l) => l.includes(audit))!;
      expect((JSON.parse(line) as { duration_ms: number }).duration_ms).toBeLessThan(50_000);
      ok(await s.call("cancel_agent_task", { task_id: slow }));
    } finally {
      await s.close();
    }
  }, 120_000);
});
