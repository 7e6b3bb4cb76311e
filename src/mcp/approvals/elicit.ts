// Putting a task's pending approval or question to the human: a form elicitation offering exactly
// the request's options (`input_required` in the 2026 era; the SDK's shim sends it as
// `elicitation/create` in the 2025 one), and the answer sent to the Bridge as decided by the human.
// A declined or dismissed form leaves the request pending: nothing is ever approved by default.
// The Bridge validates the answer against the request it holds, so a forged option is refused
// there (INVALID_APPROVAL_DECISION / INVALID_QUESTION_ANSWER) and the request stays pending.
import { type InputRequiredResult, inputRequired, inputResponse } from "@modelcontextprotocol/server";
import type { FormQuestion, QuestionRequest } from "../../runtimes/types.ts";
import { toJsonSchema } from "../../runtimes/acp/elicitation-schema.ts";
import { escapeControls } from "../../common/escape.ts";
import { ServerfsError } from "../../errors.ts";
import type { ToolContext } from "../tool.ts";
import { type ElicitationState, elicitationStateCodec } from "./state.ts";
import type { Params } from "../../bridge/rpc/methods.ts";

/** The key of the one embedded request of a round. */
const KEY = "serverfs_interaction";
const MAX_TEXT = 500;

interface PendingRequest {
  request_id: string;
  task_id: string;
  kind: string;
  status: string;
  payload: Record<string, unknown>;
  advice?: { option_id: string | null; reason: string; rule: string } | null;
}

type Choice = { const: string; title: string };
type FormSchema = { type: "object"; properties: Record<string, Record<string, unknown>>; required: string[] };

/** What the human did with the form, returned beside the task view. */
export interface ElicitationOutcome {
  request_id: string;
  kind: "approval" | "question";
  outcome: "answered" | "declined" | "cancelled";
  decided_by: "human";
}

export function pendingOf(view: Record<string, unknown>): PendingRequest | null {
  const p = view.pending_request as PendingRequest | undefined;
  if (!p || p.status !== "pending" || (p.kind !== "approval" && p.kind !== "question")) return null;
  return p;
}

/** Agent text for the form, cut, and unable to draw: a newline in a command cannot fake a line of the form. */
function clip(text: unknown): string {
  const s = typeof text === "string" ? text : "";
  return escapeControls(s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s);
}

/** Exactly the options the request offers: its provider options when it has them, else its decisions. */
function approvalChoices(payload: Record<string, unknown>): Choice[] {
  const options = payload.response_options as Array<{ option_id: string; label: string }> | undefined;
  if (options && options.length > 0) return options.map((o) => ({ const: o.option_id, title: clip(o.label) || o.option_id }));
  return ((payload.available_decisions as string[] | undefined) ?? []).map((d) => ({ const: d, title: d.replaceAll("_", " ") }));
}

/**
 * The advisor's line of the form. It is text only: the form preselects nothing (no `default`), so
 * the human's choice is always their own.
 */
function adviceText(p: PendingRequest, choices: Choice[]): string | null {
  const a = p.advice;
  if (!a) return null;
  const label = a.option_id === null ? null : (choices.find((c) => c.const === a.option_id)?.title ?? a.option_id);
  return `Advice (serverfs rule ${clip(a.rule)}; you decide): ${label === null ? "no recommendation" : `"${label}"`}. ${clip(a.reason)}`;
}

function approvalForm(task: string, p: PendingRequest): { message: string; requestedSchema: FormSchema } {
  const lines = [`The coding agent of task ${task} asks for approval: ${clip(p.payload.title)}`];
  if (p.payload.command_display) lines.push(`Command: ${clip(p.payload.command_display)}`);
  if (p.payload.reason) lines.push(`Reason: ${clip(p.payload.reason)}`);
  const advice = adviceText(p, approvalChoices(p.payload));
  if (advice) lines.push(advice);
  return {
    message: lines.join("\n"),
    requestedSchema: {
      type: "object",
      properties: { decision: { type: "string", title: "Your decision", oneOf: approvalChoices(p.payload) } },
      required: ["decision"],
    },
  };
}

/** Question fields are named q0, q1, …: provider question ids are not valid form keys everywhere. */
function questionForm(task: string, p: PendingRequest): { message: string; requestedSchema: FormSchema } {
  const { questions } = p.payload as unknown as QuestionRequest;
  const properties: FormSchema["properties"] = {};
  const required: string[] = [];
  questions.forEach((q, i) => {
    const choices = q.options.map((o) => ({ const: o.option_id, title: clip(o.label) || o.option_id }));
    if (choices.length > 0) {
      properties[`q${i}`] = q.multi_select
        ? { type: "array", title: clip(q.prompt), items: { anyOf: choices } }
        : { type: "string", title: clip(q.prompt), oneOf: choices };
      required.push(`q${i}`);
    }
    if (q.allow_free_text || choices.length === 0) {
      properties[`q${i}_text`] = { type: "string", title: choices.length > 0 ? "Or your own answer" : clip(q.prompt) };
      if (choices.length === 0) required.push(`q${i}_text`);
    }
  });
  const advice = adviceText(p, []);
  const message = `The coding agent of task ${task} has ${questions.length === 1 ? "a question" : "questions"} for you.${advice ? `\n${advice}` : ""}`;
  return { message, requestedSchema: { type: "object", properties, required } };
}

/** A form question's own form field name: `f0`, `f1`, … (like `q0`, agent names are not valid keys everywhere). */
const formField = (_name: string, i: number) => `f${i}`;

/**
 * An ACP agent's form question is shown as the agent's own form (its checked schema, agent text
 * clipped and unable to draw), so the host renders the fields, types and constraints it asked for.
 */
function agentForm(task: string, form: FormQuestion): { message: string; requestedSchema: FormSchema } {
  const schema = toJsonSchema(form.schema, formField) as { properties: Record<string, Record<string, unknown>>; required: string[] };
  form.schema.properties.forEach(({ name }, i) => {
    const field = schema.properties[formField(name, i)]!;
    field.title = clip(field.title ?? name) || name;
    if (typeof field.description === "string") field.description = clip(field.description);
    const choices = (field.oneOf ?? (field.items as { anyOf?: unknown } | undefined)?.anyOf) as Array<{ title: string; description?: string }> | undefined;
    for (const c of choices ?? []) {
      c.title = clip(c.title);
      if (c.description !== undefined) c.description = clip(c.description);
    }
  });
  return {
    message: `The coding agent of task ${task} asks: ${clip(form.message)}`,
    requestedSchema: { type: "object", properties: schema.properties, required: schema.required },
  };
}

/** The round that asks the human; the SDK calls the tool again with the answer. */
export async function askHuman(task: string, p: PendingRequest): Promise<InputRequiredResult> {
  const kind = p.kind as ElicitationState["kind"];
  const agentQuestion = kind === "question" ? formOf(p.payload) : null;
  const form = kind === "approval" ? approvalForm(task, p) : agentQuestion ? agentForm(task, agentQuestion) : questionForm(task, p);
  const requestState = await elicitationStateCodec().mint({ task_id: task, request_id: p.request_id, kind });
  return inputRequired({ inputRequests: { [KEY]: inputRequired.elicit({ mode: "form", ...form } as never) }, requestState });
}

/** The answer round: the state (already verified by the SDK) and what the client sent back, or null when this is not one. */
export function answerOf(ctx: ToolContext, task: string): { state: ElicitationState; response: ReturnType<typeof inputResponse> } | null {
  const sdk = ctx.extra.ctx;
  if (!sdk?.mcpReq.inputResponses) return null;
  const state = sdk.mcpReq.requestState<ElicitationState>();
  if (!state || typeof state !== "object") return null;
  if (state.task_id !== task) throw new ServerfsError("INVALID_ARGUMENT", "the answered form belongs to another task");
  return { state, response: inputResponse(sdk.mcpReq.inputResponses, KEY) };
}

/** The Bridge call for an accepted form: the RPC method and its params, decided by the human. */
export type BridgeAnswer =
  | { method: "task.approval.respond"; params: Params<"task.approval.respond"> }
  | { method: "task.question.answer"; params: Params<"task.question.answer"> };

export function bridgeAnswer(state: ElicitationState, content: Record<string, unknown>, payload: Record<string, unknown> | null): BridgeAnswer {
  const base = { task_id: state.task_id, request_id: state.request_id, decided_by: "human" };
  if (state.kind === "approval") {
    const choice = content.decision;
    if (typeof choice !== "string" || choice.length === 0) throw new ServerfsError("INVALID_APPROVAL_DECISION", "the form's decision is missing");
    const byOption = Array.isArray(payload?.response_options) && (payload.response_options as unknown[]).length > 0;
    return { method: "task.approval.respond", params: { ...base, ...(byOption ? { option_id: choice } : { decision: choice }) } };
  }
  const agentQuestion = formOf(payload);
  if (agentQuestion) return { method: "task.question.answer", params: { ...base, answers: formAnswers(agentQuestion, content) } };
  const questions = ((payload as unknown as QuestionRequest | null)?.questions ?? []) as QuestionRequest["questions"];
  const answers = questions.map((q, i) => {
    const picked = content[`q${i}`];
    const selected = picked === undefined ? [] : Array.isArray(picked) ? picked : [picked];
    if (!selected.every((v) => typeof v === "string")) throw new ServerfsError("INVALID_QUESTION_ANSWER", `answer q${i} must be option ids`);
    const text = content[`q${i}_text`];
    return { question_id: q.question_id, selected_option_ids: selected as string[], ...(typeof text === "string" && text.length > 0 ? { text } : {}) };
  });
  return { method: "task.question.answer", params: { ...base, answers } };
}

/** The pending question's agent form, when it is one. */
export function formOf(payload: Record<string, unknown> | null): FormQuestion | null {
  const form = (payload as unknown as QuestionRequest | null)?.form;
  return form && typeof form === "object" ? form : null;
}

/**
 * The human's form content as typed answers, field by field; the Bridge turns them back into the
 * agent's content and checks them against its schema (a misfit is INVALID_QUESTION_ANSWER there).
 */
function formAnswers(form: FormQuestion, content: Record<string, unknown>): Array<{ question_id: string; selected_option_ids: string[]; text?: string }> {
  const wrong = (name: string) => new ServerfsError("INVALID_QUESTION_ANSWER", `the form's field for '${name.slice(0, 64)}' has the wrong type`);
  const out: Array<{ question_id: string; selected_option_ids: string[]; text?: string }> = [];
  form.schema.properties.forEach(({ name, schema }, i) => {
    const v = content[formField(name, i)];
    if (v === undefined || v === null) return;
    if (schema.type === "array") {
      if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) throw wrong(name);
      out.push({ question_id: name, selected_option_ids: v as string[] });
    } else if (schema.type === "boolean") {
      if (typeof v !== "boolean") throw wrong(name);
      out.push({ question_id: name, selected_option_ids: [String(v)] });
    } else if (schema.type === "string" && "choices" in schema) {
      if (typeof v !== "string") throw wrong(name);
      out.push({ question_id: name, selected_option_ids: [v] });
    } else if (schema.type === "string") {
      if (typeof v !== "string") throw wrong(name);
      out.push({ question_id: name, selected_option_ids: [], text: v });
    } else {
      if (typeof v !== "number" || !Number.isFinite(v)) throw wrong(name);
      out.push({ question_id: name, selected_option_ids: [], text: String(v) });
    }
  });
  return out;
}
