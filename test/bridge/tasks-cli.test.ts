// `serverfs tasks` as a real process against a real Bridge: list, show, approve (decision and
// --option), answer, events --follow, cancel, and the error when the Bridge is down.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { runCliAsync } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup, closeHarness, startHarness, type Harness } from "./helpers.ts";

let h: Harness;
let config: string;

beforeAll(async () => {
  h = await startHarness({ agent: { max_active_tasks: 8 } });
  config = path.join(h.root, "serverfs.toml");
  fs.writeFileSync(
    config,
    `[server]\nstate_dir = "${h.stateDir}"\n[[workdirs]]\nalias = "repo"\npath = "${h.workdirs.repo}"\nread_only = false\n` +
      `agent_mode = "workspace-write"\nagent_runtimes = ["fake"]\n[agent]\nenabled = true\nenable_fake_runtime = true\n`,
  );
});
afterAll(() => closeHarness(h));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await runCliAsync(["tasks", ...args], { cwd: process.cwd() });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

test("list and show, table and --json", async () => {
  const id = await h.submit("complete:listed", { correlation_id: "cli-1" });
  await h.waitTerminal(id);
  const table = await cli("list", "--config", config);
  expect(table.code).toBe(0);
  expect(table.out.split("\n")[0]).toMatch(/^TASK\s+STATUS\s+RUNTIME\s+WORKDIR\s+CREATED\s+LAST EVENT\s+ERROR\s+PENDING\s+ADVICE$/);
  expect(table.out).toContain(`${id}  succeeded`);
  // The time of the task's newest event: the one task.events lists last.
  const lastAt = ((await h.events(id)).at(-1) as unknown as { created_at: string }).created_at;
  expect(table.out.split("\n").find((l) => l.startsWith(id))).toContain(`  ${lastAt}  `);
  const json = await cli("list", "--config", config, "--json", "--status", "succeeded");
  const listed = JSON.parse(json.out) as { tasks: Array<{ task_id: string; status: string; last_event_at: string | null }> };
  expect(listed.tasks.find((t) => t.task_id === id)).toMatchObject({ status: "succeeded", last_event_at: lastAt });
  const show = await cli("show", id, "--config", config);
  expect(show.out).toContain("status                 succeeded");
  expect(show.out).toContain(`last_event_at          ${lastAt}`);
  expect(show.out).toContain("correlation_id         cli-1");
  expect(show.out).toContain("final_response:\nlisted");
  expect(JSON.parse((await cli("show", id, "--config", config, "--json")).out).task_id).toBe(id);
});

test("approve by decision and by --option; answer a question; follow events to the end", async () => {
  const a = await h.submit("approval:make");
  const ta = await h.waitFor(a, (t) => t.pending_request_id !== null);
  const shown = await cli("show", a, "--config", config);
  expect(shown.out).toContain(`pending_request        ${String(ta.pending_request_id)} (approval`);
  expect(shown.out).toContain("decisions: approve_once, approve_session, deny, cancel_task");
  const ok = await cli("approve", a, String(ta.pending_request_id), "approve_once", "--config", config);
  expect([ok.code, ok.out.trim()]).toEqual([0, `resolved ${String(ta.pending_request_id)} of ${a}`]);
  expect((await h.waitTerminal(a)).final_response).toBe("approval=approve_once");

  const o = await h.submit("approval-options:npm");
  const to = await h.waitFor(o, (t) => t.pending_request_id !== null);
  expect((await cli("show", o, "--config", config)).out).toContain("option opt-allow-always  [allow_always] Always allow");
  const both = await cli("approve", o, String(to.pending_request_id), "deny", "--option", "opt-reject", "--config", config);
  expect(both.code).toBe(2);
  const forged = await cli("approve", o, String(to.pending_request_id), "--option", "nope", "--config", config);
  expect(forged.code).toBe(1);
  expect(forged.err).toContain("INVALID_APPROVAL_DECISION");
  expect((await cli("approve", o, String(to.pending_request_id), "--option", "opt-reject", "--config", config)).code).toBe(0);
  expect((await h.waitTerminal(o)).final_response).toBe("option=opt-reject decision=deny");

  const q = await h.submit("question:pick");
  const tq = await h.waitFor(q, (t) => t.pending_request_id !== null);
  const ans = await cli("answer", q, String(tq.pending_request_id), "q1=a", "--text", "q1=and more", "--config", config);
  expect(ans.code).toBe(0);
  expect(JSON.parse((await h.waitTerminal(q)).final_response as string)).toEqual({
    answers: [{ question_id: "q1", selected_option_ids: ["a"], text: "and more" }],
  });

  const f = await h.submit("sleep:400");
  const follow = await cli("events", f, "--follow", "--json", "--config", config);
  const types = follow.out.trim().split("\n").map((l) => (JSON.parse(l) as { event_type: string }).event_type);
  expect(types[0]).toBe("task.started");
  expect(types[types.length - 1]).toBe("task.completed");
});

test("cancel, and a coded one-line error when the Bridge is down", async () => {
  const id = await h.submit("wait:");
  await h.waitFor(id, (t) => t.status === "running");
  const c = await cli("cancel", id, "--config", config);
  expect([c.code, c.out.trim()]).toEqual([0, `${id} cancelled`]);
  const dir = tempDir();
  const other = path.join(dir, "serverfs.toml");
  fs.mkdirSync(path.join(dir, "repo"));
  fs.writeFileSync(
    other,
    `[server]\nstate_dir = "${dir}/state"\n[[workdirs]]\nalias = "repo"\npath = "${dir}/repo"\n[agent]\nenabled = true\n`,
  );
  const down = await cli("list", "--config", other);
  expect(down.code).toBe(1);
  // The command line names the operator's own config file in the fix.
  expect(down.err.trim()).toBe(
    `serverfs: tasks: AGENT_BRIDGE_UNAVAILABLE: Agent Bridge is not reachable; fix: start the Bridge: serverfs bridge --config ${other}, or serverfs service start when its service is installed`,
  );
  expect((await cli("frobnicate", "--config", other)).code).toBe(2);
  cleanup(dir);
});
