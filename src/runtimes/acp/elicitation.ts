// ACP `elicitation/create` ↔ the Bridge's pending question. Only form mode is open: serverfs
// advertises `elicitation.form` and never `elicitation.url` (sending a person to an agent-chosen
// URL is a separate security decision). A form whose schema is inside the bounded subset
// (elicitation-schema.ts) becomes a question with one entry per property; anything else is
// declined at once with a coded reason in `_meta.serverfs`, never shown half-understood.
import type * as acp from "@agentclientprotocol/sdk";
import type { QuestionRequest, QuestionResolution } from "../types.ts";
import { FORM_BOUNDS, FormSchemaDeclined, describeProperty, parseFormSchema, type FormProperty } from "./elicitation-schema.ts";

/** The stable codes a declined elicitation carries (docs/agent-bridge.md, "Questions from ACP agents"). */
export type ElicitationDeclineCode = "ELICITATION_MODE_UNSUPPORTED" | "ELICITATION_SCOPE_UNSUPPORTED" | "ELICITATION_SCHEMA_UNSUPPORTED";

export interface ElicitationDecline {
  code: ElicitationDeclineCode;
  /** A stable sub-reason: `url_mode_closed`, `unknown_mode`, `not_this_session`, or a schema DeclineReason. */
  reason: string;
  detail: string;
}

/** What the client advertises: form elicitation only. */
export const FORM_ELICITATION_CAPABILITY = { form: {} } as const;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The answer that declines, with serverfs's reason for the agent to read. */
export function declineResponse(d: ElicitationDecline): acp.CreateElicitationResponse {
  return { action: "decline", _meta: { serverfs: { code: d.code, reason: d.reason, detail: d.detail } } } as acp.CreateElicitationResponse;
}

export const CANCEL_RESPONSE = { action: "cancel" } as acp.CreateElicitationResponse;

function optionsOf(schema: FormProperty): QuestionRequest["questions"][number]["options"] {
  if (schema.type === "boolean") return [{ option_id: "true", label: "true" }, { option_id: "false", label: "false" }];
  if ("choices" in schema) {
    return schema.choices.map((c) => ({ option_id: c.const, label: c.title, ...(c.description !== undefined ? { description: c.description } : {}) }));
  }
  return [];
}

/**
 * The question for one request in `sessionId`, or why it is declined. A form in another session,
 * or one scoped to a JSON-RPC request instead of a session, is not this task's to ask.
 */
export function questionFromElicitation(params: unknown, sessionId: string | null): { question: QuestionRequest } | { decline: ElicitationDecline } {
  const p = (params && typeof params === "object" ? params : {}) as { mode?: unknown; message?: unknown; sessionId?: unknown; requestedSchema?: unknown };
  if (p.mode === "url") {
    return { decline: { code: "ELICITATION_MODE_UNSUPPORTED", reason: "url_mode_closed", detail: "serverfs does not open URL-mode elicitations" } };
  }
  if (p.mode !== "form") {
    const mode = typeof p.mode === "string" ? `'${clip(p.mode.replace(/[^\x20-\x7e]/g, "?"), 32)}'` : "missing";
    return { decline: { code: "ELICITATION_MODE_UNSUPPORTED", reason: "unknown_mode", detail: `mode ${mode} is not supported; serverfs takes form mode` } };
  }
  if (sessionId === null || p.sessionId !== sessionId) {
    return { decline: { code: "ELICITATION_SCOPE_UNSUPPORTED", reason: "not_this_session", detail: "serverfs answers forms for the task's own session only" } };
  }
  if (typeof p.message !== "string") {
    return { decline: { code: "ELICITATION_SCHEMA_UNSUPPORTED", reason: "not_an_object", detail: "the request has no message" } };
  }
  if ([...p.message].length > FORM_BOUNDS.messageChars) {
    return { decline: { code: "ELICITATION_SCHEMA_UNSUPPORTED", reason: "text_too_long", detail: `the message is longer than ${FORM_BOUNDS.messageChars} characters` } };
  }
  try {
    const schema = parseFormSchema(p.requestedSchema);
    const required = new Set(schema.required);
    const questions = schema.properties.map(({ name, schema: prop }) => {
      const label = prop.title ?? name;
      const described = prop.description !== undefined ? `${label}: ${prop.description}` : label;
      return {
        question_id: name,
        prompt: `${described} (${describeProperty(prop, required.has(name))})`,
        options: optionsOf(prop),
        multi_select: prop.type === "array",
        allow_free_text: prop.type === "string" ? !("choices" in prop) : prop.type === "number" || prop.type === "integer",
      };
    });
    return { question: { questions, form: { message: p.message, schema } } };
  } catch (err) {
    if (err instanceof FormSchemaDeclined) return { decline: { code: "ELICITATION_SCHEMA_UNSUPPORTED", reason: err.reason, detail: err.detail } };
    throw err;
  }
}

/** The ACP answer for the human's resolution of a form question. */
export function responseForAnswer(resolution: QuestionResolution): acp.CreateElicitationResponse {
  switch (resolution.action) {
    case "accept":
      return { action: "accept", content: resolution.content ?? {} } as acp.CreateElicitationResponse;
    case "decline":
      return { action: "decline" } as acp.CreateElicitationResponse;
    default:
      return CANCEL_RESPONSE;
  }
}
