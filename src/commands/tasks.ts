// `serverfs tasks`: the operator's view of Agent tasks over the same local Bridge connection the
// MCP tools use. Readable tables by default, `--json` for scripts (one JSON document per call,
// or one event per line with `events --follow`).
import { ServerfsError } from "../errors.ts";
import { loadRegistry } from "../config/load.ts";
import type { BridgeClient } from "../bridge/ipc/client.ts";
import { bridgeClientFor } from "../bridge/ipc/connect.ts";
import { isTerminal } from "../bridge/lifecycle.ts";
import type { Params, TaskEvent, TaskView } from "../bridge/rpc/methods.ts";
import { flag, parseArgs, usage, type ParsedArgs } from "./args.ts";

const FLAGS = {
  config: { value: true, path: true },
  json: {},
  follow: {},
  status: { value: true },
  limit: { value: true },
  after: { value: true },
  option: { value: true },
  grant: { value: true, repeat: true },
  text: { value: true, repeat: true },
} as const;

type Out = (text: string) => void;

async function clientFor(args: ParsedArgs): Promise<{ client: BridgeClient; timeoutMs: number }> {
  const configFile = flag(args, "config");
  // Without --config, the operator means the default deployment (the per-user state dir).
  const deployment = configFile ? (await loadRegistry({ configFile })).registry : { server: { state_dir: null } };
  const client = bridgeClientFor(deployment, configFile ? { configFile } : {});
  return { client, timeoutMs: client.defaultTimeoutMs };
}

function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const v = flag(args, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw usage(`--${name} must be a non-negative integer`);
  return Number(v);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}

/** The positionals after the subcommand; at least `count` of them, or a usage error. */
function need(args: ParsedArgs, count: 1, what: string): [string, ...string[]];
function need(args: ParsedArgs, count: 2, what: string): [string, string, ...string[]];
function need(args: ParsedArgs, count: number, what: string): string[] {
  const pos = args.positionals.slice(1);
  if (pos.length < count) throw usage(`tasks ${args.positionals[0]} needs ${what}`);
  return pos;
}

function formatEvent(e: TaskEvent): string {
  return `${String(e.event_id).padStart(6)}  ${String(e.created_at)}  ${String(e.event_type).padEnd(22)}  ${JSON.stringify(e.payload)}`;
}

function showTask(t: TaskView): string {
  const lines: string[] = [];
  const keys = [
    "task_id",
    "status",
    "runtime",
    "workdir_alias",
    "relative_cwd",
    "profile",
    "created_at",
    "started_at",
    "completed_at",
    "deadline_at",
    "correlation_id",
    "idempotency_key",
    "continue_from_task_id",
    "error_code",
    "error_message",
  ] as const satisfies ReadonlyArray<keyof TaskView>;
  for (const k of keys) if (t[k] !== null && t[k] !== undefined && t[k] !== "") lines.push(`${k.padEnd(22)} ${String(t[k])}`);
  const result = t.result;
  if (result) lines.push(`${"result".padEnd(22)} ${String(result.storage)}, ${String(result.size_bytes)} bytes, sha256 ${String(result.sha256)}`);
  const pending = t.pending_request;
  if (pending) {
    lines.push(`${"pending_request".padEnd(22)} ${String(pending.request_id)} (${String(pending.kind)}, expires ${String(pending.expires_at)})`);
    const payload = pending.payload as Record<string, unknown>;
    if (pending.kind === "approval") {
      lines.push(`  ${String(payload.title ?? "")}`);
      if (payload.command_display) lines.push(`  command: ${String(payload.command_display)}`);
      const options = payload.response_options as Array<Record<string, unknown>> | undefined;
      if (options) for (const o of options) lines.push(`  option ${String(o.option_id)}  [${String(o.kind)}] ${String(o.label)}`);
      else lines.push(`  decisions: ${(payload.available_decisions as string[]).join(", ")}`);
    } else {
      for (const q of payload.questions as Array<Record<string, unknown>>) {
        lines.push(`  ${String(q.question_id)}: ${String(q.prompt)}${q.multi_select ? " (several)" : ""}${q.allow_free_text ? " (free text ok)" : ""}`);
        for (const o of q.options as Array<Record<string, unknown>>) lines.push(`    ${String(o.option_id)}  ${String(o.label)}`);
      }
    }
  }
  if (typeof t.final_response === "string") {
    lines.push("", t.final_response_truncated ? "final_response (preview; read the rest with --json / read_agent_task_result):" : "final_response:", t.final_response);
  }
  return lines.join("\n");
}

/** `q1=a,b` selects options; `--text q1=some words` adds free text. */
function parseAnswers(specs: string[], texts: string[]): Array<Record<string, unknown>> {
  const byId = new Map<string, Record<string, unknown>>();
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    if (eq <= 0) throw usage(`answer '${spec}' must look like QUESTION_ID=OPTION[,OPTION]`);
    const id = spec.slice(0, eq);
    const options = spec.slice(eq + 1).split(",").filter(Boolean);
    byId.set(id, { ...(byId.get(id) ?? { question_id: id }), selected_option_ids: options });
  }
  for (const t of texts) {
    const eq = t.indexOf("=");
    if (eq <= 0) throw usage(`--text '${t}' must look like QUESTION_ID=TEXT`);
    const id = t.slice(0, eq);
    byId.set(id, { ...(byId.get(id) ?? { question_id: id }), text: t.slice(eq + 1) });
  }
  if (byId.size === 0) throw usage("tasks answer needs at least one QUESTION_ID=OPTION or --text QUESTION_ID=TEXT");
  return [...byId.values()];
}

export async function run(argv: string[], out: Out): Promise<number> {
  const args = parseArgs(argv, FLAGS);
  const sub = args.positionals[0];
  if (!sub) throw usage("tasks needs a subcommand: list, show, events, approve, answer, cancel");
  const json = args.switches.has("json");
  const { client } = await clientFor(args);
  const emit = (value: Record<string, unknown>, human: () => string) => out(json ? JSON.stringify(value, null, 2) : human());
  switch (sub) {
    case "list": {
      const params: Params<"task.list"> = { limit: intFlag(args, "limit", 50) };
      const status = flag(args, "status");
      if (status) params.status = status;
      const r = await client.call("task.list", params);
      emit(r, () =>
        r.tasks.length === 0
          ? "no tasks"
          : table([
              ["TASK", "STATUS", "RUNTIME", "WORKDIR", "CREATED", "ERROR", "PENDING"],
              ...r.tasks.map((t) => [t.task_id, t.status, t.runtime, t.workdir_alias, t.created_at, t.error_code ?? "", t.pending_request_id ?? ""].map(String)),
            ]),
      );
      return 0;
    }
    case "show": {
      const [id] = need(args, 1, "a task id");
      const t = await client.call("task.get", { task_id: id });
      emit(t, () => showTask(t));
      return 0;
    }
    case "events": {
      const [id] = need(args, 1, "a task id");
      let after = intFlag(args, "after", 0);
      const follow = args.switches.has("follow");
      for (;;) {
        const r = await client.call("task.events", { task_id: id, after_event_id: after, limit: 500 });
        const events = r.events;
        if (follow) for (const e of events) out(json ? JSON.stringify(e) : formatEvent(e));
        else emit(r, () => (events.length === 0 ? "no events" : events.map(formatEvent).join("\n")));
        after = r.next_after_event_id;
        if (!follow) return 0;
        if (events.length === 500) continue;
        const t = await client.call("task.get", { task_id: id });
        if (isTerminal(t.status)) {
          const tail = await client.call("task.events", { task_id: id, after_event_id: after, limit: 500 });
          for (const e of tail.events) out(json ? JSON.stringify(e) : formatEvent(e));
          return 0;
        }
        // Long-poll on the task (wakes on status change), capped so new events show within a second.
        await client.call("task.get", { task_id: id, wait_seconds: 1 });
      }
    }
    case "approve": {
      const pos = need(args, 2, "a task id and a request id");
      const option = flag(args, "option");
      const decision = pos[2];
      if ((option === undefined) === (decision === undefined)) throw usage("give exactly one of DECISION or --option OPTION_ID");
      if (pos.length > 3) throw usage(`unexpected argument '${pos[3]}'`);
      // The history records that the operator decided (not the assistant, not an MCP elicitation).
      const params: Params<"task.approval.respond"> = { task_id: pos[0], request_id: pos[1], decided_by: "operator" };
      if (decision !== undefined) params.decision = decision;
      if (option !== undefined) params.option_id = option;
      const grants = args.flags.get("grant");
      if (grants) params.granted_permission_ids = grants;
      const r = await client.call("task.approval.respond", params);
      emit(r, () => `resolved ${r.request_id} of ${r.task_id}`);
      return 0;
    }
    case "answer": {
      const pos = need(args, 2, "a task id, a request id and answers");
      const answers = parseAnswers(pos.slice(2), args.flags.get("text") ?? []);
      const r = await client.call("task.question.answer", { task_id: pos[0], request_id: pos[1], answers, decided_by: "operator" });
      emit(r, () => `answered ${r.request_id} of ${r.task_id}`);
      return 0;
    }
    case "cancel": {
      const [id] = need(args, 1, "a task id");
      const r = await client.call("task.cancel", { task_id: id });
      emit(r, () => `${r.task_id} ${r.status}${r.workdir_free ? "" : ` (workdir still held: ${r.workdir_hold_reason})`}`);
      return 0;
    }
    default:
      throw new ServerfsError("USAGE_ERROR", `unknown tasks subcommand '${sub}'`);
  }
}

export async function main(argv: string[]): Promise<number> {
  return run(argv, (text) => process.stdout.write(`${text}\n`));
}
