// Validation of human interactions (docs/design/interactions.md): what an adapter may ask, and whether a
// human's answer fits exactly what was asked. Pure functions; interactions.ts does the state changes.
import { ServerfsError } from "../../errors.ts";
import {
  APPROVAL_DECISIONS,
  type ApprovalDecision,
  type ApprovalRequest,
  type ApprovalResolution,
  type QuestionAnswer,
  type QuestionRequest,
  type ResponseOptionKind,
} from "../../runtimes/types.ts";
import { FORM_BOUNDS } from "../../runtimes/acp/elicitation-schema.ts";

const CATEGORIES = new Set(["command", "file_change", "provider_permission", "network_permission", "mcp_tool", "other"]);
const OPTION_KINDS: ReadonlySet<ResponseOptionKind> = new Set(["allow_once", "allow_always", "reject_once", "reject_always"]);
const KIND_TO_DECISION: Record<ResponseOptionKind, ApprovalDecision> = {
  allow_once: "approve_once",
  allow_always: "approve_session",
  reject_once: "deny",
  reject_always: "deny",
};
const MAX_OPTIONS = 32;
const MAX_ID = 256;

function providerError(why: string): ServerfsError {
  return new ServerfsError("AGENT_PROVIDER_ERROR", `provider sent an invalid interaction: ${why}`);
}

/** Check and normalise what an adapter asks; available_decisions always ends with cancel_task. */
export function normalizeApproval(req: ApprovalRequest): ApprovalRequest {
  if (!CATEGORIES.has(req.category)) throw providerError("unknown approval category");
  if (typeof req.title !== "string") throw providerError("approval title");
  const out: ApprovalRequest = { ...req };
  if (req.response_options !== undefined) {
    if (!Array.isArray(req.response_options) || req.response_options.length === 0 || req.response_options.length > MAX_OPTIONS) {
      throw providerError("response_options");
    }
    const seen = new Set<string>();
    out.response_options = req.response_options.map((o) => {
      if (typeof o.option_id !== "string" || o.option_id.length === 0 || o.option_id.length > MAX_ID || seen.has(o.option_id)) {
        throw providerError("option_id");
      }
      if (typeof o.label !== "string" || !OPTION_KINDS.has(o.kind)) throw providerError("option label/kind");
      seen.add(o.option_id);
      return { option_id: o.option_id, label: o.label.slice(0, 512), kind: o.kind };
    });
    const derived = new Set<ApprovalDecision>(out.response_options.map((o) => KIND_TO_DECISION[o.kind]));
    derived.add("cancel_task");
    out.available_decisions = APPROVAL_DECISIONS.filter((d) => derived.has(d));
  } else {
    const offered = new Set(req.available_decisions ?? []);
    for (const d of offered) if (!APPROVAL_DECISIONS.includes(d)) throw providerError("unknown decision");
    offered.add("cancel_task");
    out.available_decisions = APPROVAL_DECISIONS.filter((d) => offered.has(d));
  }
  if (req.requested_permissions !== undefined) {
    if (!Array.isArray(req.requested_permissions)) throw providerError("requested_permissions");
    for (const p of req.requested_permissions) {
      if (typeof p?.permission_id !== "string" || p.permission_id.length === 0) throw providerError("permission_id");
    }
  }
  return out;
}

export interface ApprovalAnswer {
  decision?: string;
  option_id?: string;
  granted_permission_ids?: unknown;
}

/**
 * Validate a human's answer against the stored pending payload. A request with response_options
 * is answered by exactly one offered option_id (or decision cancel_task); one without is answered
 * by a decision among available_decisions. Never both.
 */
export function validateApprovalAnswer(payload: ApprovalRequest, answer: ApprovalAnswer): ApprovalResolution {
  const invalid = (why: string) => new ServerfsError("INVALID_APPROVAL_DECISION", why);
  const hasDecision = answer.decision !== undefined;
  const hasOption = answer.option_id !== undefined;
  if (hasDecision === hasOption) {
    throw invalid(
      payload.response_options
        ? "give exactly one of option_id (one of the offered response_options) or decision cancel_task"
        : "give exactly one decision",
    );
  }
  let granted: string[] = [];
  if (answer.granted_permission_ids !== undefined) {
    if (!Array.isArray(answer.granted_permission_ids) || !answer.granted_permission_ids.every((x) => typeof x === "string")) {
      throw invalid("granted_permission_ids must be a list of strings");
    }
    granted = answer.granted_permission_ids as string[];
    const requested = new Set((payload.requested_permissions ?? []).map((p) => p.permission_id));
    for (const id of granted) {
      if (!requested.has(id)) {
        throw new ServerfsError("PERMISSION_OUTSIDE_POLICY", `permission '${id.slice(0, 64)}' was not requested`);
      }
    }
  }
  if (hasOption) {
    const options = payload.response_options;
    if (!options) throw invalid("this request takes a decision, not an option_id");
    const chosen = options.find((o) => o.option_id === answer.option_id);
    if (!chosen) throw invalid(`option_id '${String(answer.option_id).slice(0, 64)}' was not offered`);
    return { decision: KIND_TO_DECISION[chosen.kind], option_id: chosen.option_id, option_kind: chosen.kind, granted_permission_ids: granted };
  }
  const decision = answer.decision as ApprovalDecision;
  if (!APPROVAL_DECISIONS.includes(decision)) throw invalid(`decision '${String(answer.decision).slice(0, 64)}' is unknown`);
  if (payload.response_options && decision !== "cancel_task") {
    throw invalid("this request offers response_options: answer with option_id (or decision cancel_task)");
  }
  if (payload.available_decisions.length > 0 && !payload.available_decisions.includes(decision)) {
    throw invalid(`decision '${decision}' was not offered`);
  }
  return { decision, granted_permission_ids: granted };
}

export function normalizeQuestion(req: QuestionRequest): QuestionRequest {
  // A form question has one entry per property of its (already bounded) schema; a form with no
  // properties is a confirmation, answered by accept or decline alone.
  const [min, max] = req?.form !== undefined ? [0, FORM_BOUNDS.properties] : [1, 16];
  if (!req || !Array.isArray(req.questions) || req.questions.length < min || req.questions.length > max) {
    throw providerError("questions");
  }
  const ids = new Set<string>();
  for (const q of req.questions) {
    if (typeof q.question_id !== "string" || q.question_id.length === 0 || ids.has(q.question_id)) throw providerError("question_id");
    ids.add(q.question_id);
    if (typeof q.prompt !== "string" || !Array.isArray(q.options)) throw providerError("question shape");
    const opts = new Set<string>();
    for (const o of q.options) {
      if (typeof o.option_id !== "string" || opts.has(o.option_id) || typeof o.label !== "string") throw providerError("option");
      opts.add(o.option_id);
    }
    if (typeof q.multi_select !== "boolean" || typeof q.allow_free_text !== "boolean") throw providerError("question flags");
    if (q.options.length === 0 && !q.allow_free_text) throw providerError("question has no way to answer");
  }
  return req;
}

const ANSWER_KEYS = new Set(["question_id", "selected_option_ids", "text"]);

export function validateAnswers(payload: QuestionRequest, answers: unknown): QuestionAnswer[] {
  const bad = (why: string) => new ServerfsError("INVALID_QUESTION_ANSWER", why);
  if (!payload || !Array.isArray(payload.questions)) throw bad("stored question is invalid");
  if (!Array.isArray(answers) || answers.length === 0) throw bad("answers must be a non-empty list");
  const byId = new Map(payload.questions.map((q) => [q.question_id, q]));
  const seen = new Set<string>();
  const out: QuestionAnswer[] = [];
  for (const a of answers) {
    if (typeof a !== "object" || a === null || Array.isArray(a)) throw bad("each answer must be an object");
    const rec = a as Record<string, unknown>;
    for (const k of Object.keys(rec)) if (!ANSWER_KEYS.has(k)) throw bad(`unknown answer key '${k.slice(0, 64)}'`);
    const qid = rec.question_id;
    if (typeof qid !== "string") throw bad("question_id must be a string");
    const q = byId.get(qid);
    if (!q) throw bad(`unknown question_id '${qid.slice(0, 64)}'`);
    if (seen.has(qid)) throw bad(`question '${qid.slice(0, 64)}' answered twice`);
    seen.add(qid);
    const sel = rec.selected_option_ids ?? [];
    if (!Array.isArray(sel) || !sel.every((x) => typeof x === "string")) throw bad("selected_option_ids must be a list of strings");
    const selected = sel as string[];
    if (new Set(selected).size !== selected.length) throw bad("duplicate option in selected_option_ids");
    const valid = new Set(q.options.map((o) => o.option_id));
    for (const s of selected) if (!valid.has(s)) throw bad(`unknown option '${s.slice(0, 64)}'`);
    if (!q.multi_select && selected.length > 1) throw bad(`question '${qid.slice(0, 64)}' takes one option`);
    let text: string | undefined;
    if (rec.text !== undefined && rec.text !== null) {
      if (typeof rec.text !== "string") throw bad("text must be a string");
      if (!q.allow_free_text) throw bad(`question '${qid.slice(0, 64)}' does not take free text`);
      text = rec.text;
    }
    if (selected.length === 0 && (text === undefined || text.length === 0)) throw bad("an answer needs an option or text");
    out.push(text === undefined ? { question_id: qid, selected_option_ids: selected } : { question_id: qid, selected_option_ids: selected, text });
  }
  for (const q of payload.questions) if (!seen.has(q.question_id)) throw bad(`question '${q.question_id.slice(0, 64)}' is not answered`);
  return out;
}
