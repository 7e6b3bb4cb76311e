// `serverfs tasks`: the operator's view of Agent tasks over the same local Bridge connection the
// MCP tools use. Readable tables by default, `--json` for scripts (one JSON document per call,
// or one event per line with `events --follow`).
import { ServerfsError } from "../errors.ts";
import { loadRegistry } from "../config/load.ts";
import type { BridgeClient } from "../bridge/ipc/client.ts";
import { bridgeClientFor } from "../bridge/ipc/connect.ts";
import { isTerminal } from "../bridge/lifecycle.ts";
import type { Params, TaskEvent, TaskView } from "../bridge/rpc/methods.ts";
import { flag, parseCommandLine, usage, type ParsedArgs } from "./args.ts";
import { TASKS } from "./specs.ts";

type Out = (text: string) => void;

async function clientFor(args: ParsedArgs): Promise<{ client: BridgeClient; timeoutMs: number }> {
  const configFile = flag(args, "config");
  // Without --config, the operator means the default deployment (the per-user state dir).
  const deployment = configFile ? (await loadRegistry({ configFile })).registry : { server: { state_dir: null } };
  const client = bridgeClientFor(deployment, configFile ? { configFile } : {});
  return { client, timeoutMs: client.defaultTimeoutMs };
}

/** A whole-number flag; its range was checked by the parser (src/commands/specs.ts). */
function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const v = flag(args, name);
  return v === undefined ? fallback : Number(v);
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}

/** The operands after the subcommand; the parser checked their count against the table. */
function operands(args: ParsedArgs, count: 1): [string, ...string[]];
function operands(args: ParsedArgs, count: 2): [string, string, ...string[]];
function operands(args: ParsedArgs): string[] {
  return args.positionals;
}

function formatEvent(e: TaskEvent): string {
  return `${String(e.event_id).padStart(6)}  ${String(e.created_at)}  ${String(e.event_type).padEnd(22)}  ${JSON.stringify(e.payload)}`;
}

/** Advice as one line: the recommended option (or none), why, and which rule said so. Advisory only. */
function adviceLine(advice: { option_id: string | null; reason: string; rule: string } | null | undefined): string {
  if (!advice) return "none recorded";
  return `${advice.option_id === null ? "no recommendation" : `option ${advice.option_id}`}: ${advice.reason} [${advice.rule}]`;
}

function usageLine(u: NonNullable<TaskView["usage"]>): string {
  const tokens = u.used === null ? "?" : String(u.used);
  const parts = [`${tokens}${u.size === null ? "" : ` of ${u.size}`} tokens in context`];
  if (u.cost) parts.push(`cost ${u.cost.amount} ${u.cost.currency}`);
  return `${parts.join(", ")} (at ${u.updated_at})`;
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
    "last_event_at",
    "correlation_id",
    "idempotency_key",
    "continue_from_task_id",
    "error_code",
    "error_message",
  ] as const satisfies ReadonlyArray<keyof TaskView>;
  for (const k of keys) if (t[k] !== null && t[k] !== undefined && t[k] !== "") lines.push(`${k.padEnd(22)} ${String(t[k])}`);
  const result = t.result;
  if (result) lines.push(`${"result".padEnd(22)} ${String(result.storage)}, ${String(result.size_bytes)} bytes, sha256 ${String(result.sha256)}`);
  if (t.usage) lines.push(`${"usage".padEnd(22)} ${usageLine(t.usage)}`);
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
      // An ACP agent's form: its message, then one line per property (answer by property name).
      const form = payload.form as { message?: unknown } | undefined;
      if (form) lines.push(`  form: ${String(form.message ?? "")}`, "  (answer with PROPERTY=CHOICE / --text PROPERTY=VALUE, or --decline / --cancel)");
      for (const q of payload.questions as Array<Record<string, unknown>>) {
        lines.push(`  ${String(q.question_id)}: ${String(q.prompt)}${q.multi_select ? " (several)" : ""}${q.allow_free_text ? " (free text ok)" : ""}`);
        for (const o of q.options as Array<Record<string, unknown>>) lines.push(`    ${String(o.option_id)}  ${String(o.label)}`);
      }
    }
    lines.push(`  advice: ${adviceLine(pending.advice)}`);
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
  // Every flag, enum, range and operand count is checked before the Bridge is asked anything.
  const { subcommand: sub, args } = parseCommandLine(argv, TASKS);
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
              ["TASK", "STATUS", "RUNTIME", "WORKDIR", "CREATED", "LAST EVENT", "ERROR", "PENDING", "ADVICE"],
              ...r.tasks.map((t) =>
                [
                  t.task_id,
                  t.status,
                  t.runtime,
                  t.workdir_alias,
                  t.created_at,
                  t.last_event_at ?? "",
                  t.error_code ?? "",
                  t.pending_request_id ?? "",
                  t.pending_advice ? `${t.pending_advice.option_id ?? "-"} [${t.pending_advice.rule}]` : "",
                ].map(String),
              ),
            ]),
      );
      return 0;
    }
    case "show": {
      const [id] = operands(args, 1);
      const t = await client.call("task.get", { task_id: id });
      emit(t, () => showTask(t));
      return 0;
    }
    case "events": {
      const [id] = operands(args, 1);
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
      const pos = operands(args, 2);
      const option = flag(args, "option");
      const decision = pos[2];
      if ((option === undefined) === (decision === undefined)) throw usage("give exactly one of DECISION or --option OPTION_ID");
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
      const pos = operands(args, 2);
      const decline = args.switches.has("decline");
      const cancel = args.switches.has("cancel");
      const texts = args.flags.get("text") ?? [];
      if (decline && cancel) throw usage("give at most one of --decline and --cancel");
      if ((decline || cancel) && (pos.length > 2 || texts.length > 0)) throw usage(`--${decline ? "decline" : "cancel"} takes no answers`);
      const params: Params<"task.question.answer"> = { task_id: pos[0], request_id: pos[1], answers: [], decided_by: "operator" };
      if (decline || cancel) params.action = decline ? "decline" : "cancel";
      else params.answers = parseAnswers(pos.slice(2), texts);
      const r = await client.call("task.question.answer", params);
      emit(r, () => `answered ${r.request_id} of ${r.task_id}`);
      return 0;
    }
    case "cancel": {
      const [id] = operands(args, 1);
      const r = await client.call("task.cancel", { task_id: id });
      emit(r, () => `${r.task_id} ${r.status}${r.workdir_free ? "" : ` (workdir still held: ${r.workdir_hold_reason})`}`);
      return 0;
    }
    default:
      throw new ServerfsError("INTERNAL_ERROR", `tasks subcommand '${sub}' is in the table but not handled`);
  }
}

export async function main(argv: string[]): Promise<number> {
  return run(argv, (text) => process.stdout.write(`${text}\n`));
}
