// The five scenarios every agent runs through the real chain. Each returns PASS or FAIL with the
// observed reason; quirks the agent shows on the way (stop status on reject and cancel, the option
// kinds it offered) are recorded as notes for the matrix and docs/acp-profiles.md.
import fs from "node:fs";
import path from "node:path";
import { optionOfKind, TERMINAL, type Chain, type Pending, type Task } from "./chain.ts";
import type { ScriptedModel } from "./models/script.ts";
import { cancelProbe } from "./host.ts";
import { waitGone, type Watch } from "./procscan.ts";

export const SCENARIOS = ["text", "allow", "reject", "cancel", "continue"] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Cell {
  result: "PASS" | "FAIL";
  detail: string;
}

export interface Ctx {
  chain: Chain;
  model: ScriptedModel;
  watch: Watch;
  workdir: string;
  /** Wait for the next clock minute before continuing (an agent's own session/load bug). */
  continuationNeedsNewMinute?: boolean;
}

class Fail extends Error {}
const check = (ok: boolean, why: string) => {
  if (!ok) throw new Fail(why);
};

async function settleProcesses(ctx: Ctx): Promise<void> {
  const left = await waitGone(ctx.watch, 20_000);
  check(left.length === 0, `${left.length} process(es) survived: ${left.map((p) => `${p.pid} ${p.cmd}`).join("; ")}`);
}

const kindsOf = (req: Pending) => (req.payload.response_options ?? []).map((o) => `${o.kind}:${o.option_id}`).join(", ");

/** Wait for the task to ask (or end); snapshot the process tree meanwhile. */
async function nextApproval(ctx: Ctx, id: string, timeoutMs = 120_000): Promise<{ task: Task; req: Pending | null }> {
  const task = await ctx.chain.waitFor(
    id,
    (t) => {
      ctx.watch.snapshot();
      return t.status === "waiting_for_approval" || TERMINAL.has(t.status);
    },
    timeoutMs,
  );
  return { task, req: task.status === "waiting_for_approval" ? (task.pending_request as Pending) : null };
}

/** Answer by option_id when the request lists options, else by the native decision. */
async function answer(ctx: Ctx, id: string, req: Pending, allow: boolean): Promise<string> {
  const option = optionOfKind(req, allow ? "allow_once" : "reject_once");
  if (req.payload.response_options && req.payload.response_options.length > 0) {
    check(option !== null, `no ${allow ? "allow_once" : "reject_once"} option among [${kindsOf(req)}]`);
    await ctx.chain.tool("respond_agent_approval", { task_id: id, request_id: req.request_id, option_id: option });
    return `option_id ${option} [${kindsOf(req)}]`;
  }
  await ctx.chain.tool("respond_agent_approval", { task_id: id, request_id: req.request_id, decision: allow ? "approve_once" : "deny" });
  return `decision ${allow ? "approve_once" : "deny"}`;
}

const outcome = (t: Task) => `${t.status}${t.error_code ? ` ${t.error_code}` : ""}${t.error_message ? ` (${String(t.error_message).slice(0, 120)})` : ""}`;

/** What the measured runtime says about model choice (a documented per-agent quirk). */
async function modelFacts(ctx: Ctx): Promise<string> {
  const runtimes = (await ctx.chain.tool("list_agent_runtimes", {})).runtimes as Array<Record<string, unknown>>;
  const info = runtimes.find((r) => r.name === ctx.chain.runtime) ?? {};
  const r = await ctx.chain.raw("list_agent_models", { runtime: ctx.chain.runtime });
  const sc = (r.structuredContent ?? {}) as { status?: string; models?: unknown[]; code?: string };
  const models = r.isError ? `list_agent_models ${sc.code}` : `list_agent_models ${sc.status}, ${sc.models?.length ?? 0} model(s)`;
  return `capability_state ${String(info.capability_state)}, model_override ${String(info.model_override)}, ${models}`;
}

async function text(ctx: Ctx): Promise<string> {
  const id = await ctx.chain.submit("hello interop");
  const done = await ctx.chain.terminal(id);
  check(done.status === "succeeded", `task ${outcome(done)}`);
  check(String(done.final_response ?? "").includes("echo: hello interop"), `final_response ${JSON.stringify(done.final_response)}`);
  await settleProcesses(ctx);
  return `echo received; ${await modelFacts(ctx)}`;
}

async function allow(ctx: Ctx): Promise<string> {
  const target = path.join(ctx.workdir, "allowed.txt");
  const id = await ctx.chain.submit(`WRITE ${target} written through the interop chain`);
  const { task, req } = await nextApproval(ctx, id);
  check(req !== null, `no permission asked; task ${outcome(task)}, file ${fs.existsSync(target) ? "written anyway" : "absent"}`);
  const how = await answer(ctx, id, req!, true);
  // Some agents ask again (e.g. a second confirmation): allow each until the task ends.
  let done = await nextApproval(ctx, id);
  for (let i = 0; done.req && i < 3; i++) {
    await answer(ctx, id, done.req, true);
    done = await nextApproval(ctx, id);
  }
  check(done.task.status === "succeeded", `task ${outcome(done.task)}`);
  check(fs.existsSync(target), "the file was not written");
  const bytes = fs.readFileSync(target, "utf8");
  check(bytes.replace(/\n$/, "") === "written through the interop chain", `bytes on disk ${JSON.stringify(bytes)}`);
  await settleProcesses(ctx);
  return how;
}

async function reject(ctx: Ctx): Promise<string> {
  const target = path.join(ctx.workdir, "rejected.txt");
  const id = await ctx.chain.submit(`WRITE ${target} must not exist`);
  const { task, req } = await nextApproval(ctx, id);
  check(req !== null, `no permission asked; task ${outcome(task)}`);
  const how = await answer(ctx, id, req!, false);
  let done = await nextApproval(ctx, id);
  for (let i = 0; done.req && i < 3; i++) {
    await answer(ctx, id, done.req, false);
    done = await nextApproval(ctx, id);
  }
  check(!fs.existsSync(target), "the file was written after a reject");
  check(done.task.status === "succeeded" || done.task.status === "failed", `task ${outcome(done.task)}`);
  await settleProcesses(ctx);
  return `${how}; task ${outcome(done.task)}`;
}

async function cancel(ctx: Ctx): Promise<string> {
  const pids = path.join(ctx.workdir, "pids.txt");
  const id = await ctx.chain.submit(`SHELL ${cancelProbe.command(pids)}`);
  const until = Date.now() + 120_000;
  let asked = "no approval asked";
  for (;;) {
    ctx.watch.snapshot();
    const lines = fs.existsSync(pids) ? fs.readFileSync(pids, "utf8").trim().split("\n").filter(Boolean) : [];
    if (lines.length >= 3) break;
    const t = (await ctx.chain.tool("get_agent_task", { task_id: id, wait_seconds: 1 })) as Task;
    check(!TERMINAL.has(t.status), `the task ended before the shell ran: ${outcome(t)} ${JSON.stringify(String(t.final_response ?? "").slice(0, 200))}`);
    if (t.status === "waiting_for_approval") asked = await answer(ctx, id, t.pending_request as Pending, true);
    check(Date.now() < until, "the shell tool never started");
  }
  // The shell reports pids in its own pid namespace (Codex's sandbox has one): only pids that are
  // this namespace's sleeps/shells are checked directly; the scan must see the sleeps either way.
  const written = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number);
  const toolPids = cancelProbe.toolPids(written);
  ctx.watch.snapshot();
  const seen = ctx.watch.survivors();
  const before = seen.length;
  const sleeps = cancelProbe.sleepsSeen(seen, written);
  check(sleeps === 2, `the scan saw ${sleeps} of the 2 tool sleeps before the cancel (${before} agent processes)`);
  const c = await ctx.chain.tool("cancel_agent_task", { task_id: id });
  check(c.status === "cancelled", `cancel answered ${String(c.status)}`);
  const left = await waitGone(ctx.watch, 30_000);
  const alive = toolPids.filter((p) => cancelProbe.alive(p));
  check(alive.length === 0 && left.length === 0, `survivors after cancel: tool pids [${alive.join(",")}], scan [${left.map((p) => `${p.pid} ${p.cmd}`).join("; ")}]`);
  const after = (await ctx.chain.tool("get_agent_task", { task_id: id })) as Task;
  check(after.status === "cancelled", `task ${outcome(after)} after cancel`);
  return `${asked}; ${before} process(es) before (both sleeps${toolPids.length === 3 ? "" : ", tool pids in another pid namespace"}), 0 after`;
}

async function continuation(ctx: Ctx): Promise<string> {
  const word = `KIWI${Math.floor(Math.random() * 1e6)}`;
  const first = await ctx.chain.submit(`remember the word ${word}`);
  const one = await ctx.chain.terminal(first);
  check(one.status === "succeeded", `first task ${outcome(one)}`);
  await settleProcesses(ctx);
  // A new Bridge process: nothing of the first turn survives in memory.
  await ctx.chain.stopBridge();
  let waited = "";
  if (ctx.continuationNeedsNewMinute) {
    const minute = Math.floor(Date.parse(String(one.created_at)) / 60_000);
    while (Math.floor(Date.now() / 60_000) <= minute) await Bun.sleep(500);
    waited = " (waited for the next clock minute: the agent's session/load bug)";
  }
  await ctx.chain.startBridge();
  const seen = ctx.model.requests.length;
  const second = await ctx.chain.submit("RECALL", { continue_from_task_id: first });
  const two = await ctx.chain.terminal(second);
  check(two.status === "succeeded", `continued task ${outcome(two)}`);
  check(String(two.final_response ?? "").includes(word), `final_response ${JSON.stringify(two.final_response)}`);
  const later = ctx.model.requests.slice(seen).filter((r) => r.tools.length > 0);
  check(later.some((r) => r.raw.includes(word)), "the model was not shown the earlier turn");
  await settleProcesses(ctx);
  return `model saw the earlier turn after a Bridge restart${waited}`;
}

export const RUNNERS: Record<Scenario, (ctx: Ctx) => Promise<string>> = { text, allow, reject, cancel, continue: continuation };

export async function runScenario(s: Scenario, ctx: Ctx): Promise<Cell> {
  try {
    return { result: "PASS", detail: await RUNNERS[s](ctx) };
  } catch (e) {
    return { result: "FAIL", detail: e instanceof Error ? e.message : String(e) };
  }
}
