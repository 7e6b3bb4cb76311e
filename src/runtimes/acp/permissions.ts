// ACP `session/request_permission` ↔ the Bridge's pending approval. The human picks one of the
// options the agent offered, by its exact opaque `option_id`: persistent choices (allow_always,
// reject_always) are passed through as chosen, never re-labelled as a session approval or a deny
// (docs/design/interactions.md, Approvals). Options are chosen by id, never by position or kind.
import type * as acp from "@agentclientprotocol/sdk";
import { ServerfsError } from "../../errors.ts";
import { boundedText, toolFields } from "./mapping.ts";
import { protocolError } from "./protocol-errors.ts";
import { utf8Bytes, utf8Prefix } from "../../common/utf8.ts";

export type OptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";
const KINDS = new Set<string>(["allow_once", "allow_always", "reject_once", "reject_always"]);
export const MAX_RESPONSE_OPTIONS = 32;
const MAX_OPTION_ID_CHARS = 256;
const MAX_TOOL_INPUT_BYTES = 4096;

export interface ResponseOption {
  option_id: string;
  label: string;
  kind: OptionKind;
}

export type Decision = "approve_once" | "approve_session" | "deny" | "cancel_task";

export interface ApprovalPayload {
  category: "command" | "file_change" | "network_permission" | "provider_permission";
  title: string;
  tool_call_id: string | null;
  tool_kind: string | null;
  file_changes?: Array<{ path: string }>;
  tool_input?: string;
  response_options: ResponseOption[];
  /** Derived for callers that only know decisions; `option_id` remains the exact selector. */
  available_decisions: Decision[];
}

const DECISION_OF_KIND: Record<OptionKind, Decision> = {
  allow_once: "approve_once",
  allow_always: "approve_session",
  reject_once: "deny",
  reject_always: "deny",
};

function categoryOf(kind: string | null): ApprovalPayload["category"] {
  switch (kind) {
    case "execute":
      return "command";
    case "edit":
    case "delete":
    case "move":
      return "file_change";
    case "fetch":
      return "network_permission";
    default:
      return "provider_permission";
  }
}

function boundedInput(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  let text: string;
  try {
    text = typeof raw === "string" ? raw : JSON.stringify(raw);
  } catch {
    return undefined;
  }
  if (typeof text !== "string") return undefined;
  if (utf8Bytes(text) <= MAX_TOOL_INPUT_BYTES) return text;
  return `${utf8Prefix(text, MAX_TOOL_INPUT_BYTES)}…`;
}

/** Build the pending approval for one request; refuses option lists nobody could answer safely. */
export function approvalFromRequest(params: acp.RequestPermissionRequest): ApprovalPayload {
  const raw = params as unknown as { options?: unknown; toolCall?: unknown };
  if (!Array.isArray(raw.options) || raw.options.length === 0) throw protocolError("a permission request offered no options");
  if (raw.options.length > MAX_RESPONSE_OPTIONS) {
    throw protocolError(`a permission request offered more than ${MAX_RESPONSE_OPTIONS} options`);
  }
  const seen = new Set<string>();
  const options: ResponseOption[] = [];
  for (const o of raw.options as unknown[]) {
    const opt = (o && typeof o === "object" ? o : {}) as { optionId?: unknown; name?: unknown; kind?: unknown };
    if (typeof opt.optionId !== "string" || opt.optionId.length === 0 || opt.optionId.length > MAX_OPTION_ID_CHARS) {
      throw protocolError("a permission option has no usable optionId");
    }
    if (seen.has(opt.optionId)) throw protocolError("a permission request offered the same optionId twice");
    seen.add(opt.optionId);
    // The kind is what tells a human "once" from "always": an option without a known kind
    // cannot be presented truthfully, so the whole request is refused rather than guessed at.
    if (typeof opt.kind !== "string" || !KINDS.has(opt.kind)) throw protocolError("a permission option has an unknown kind");
    options.push({ option_id: opt.optionId, label: boundedText(opt.name, 256) ?? opt.optionId, kind: opt.kind as OptionKind });
  }
  const tool = toolFields(raw.toolCall);
  const toolRaw = (raw.toolCall && typeof raw.toolCall === "object" ? raw.toolCall : {}) as { rawInput?: unknown };
  const decisions = new Set<Decision>();
  for (const o of options) decisions.add(DECISION_OF_KIND[o.kind]);
  decisions.add("cancel_task");
  const payload: ApprovalPayload = {
    category: categoryOf(tool?.kind ?? null),
    title: tool?.title ?? "The agent asks for permission",
    tool_call_id: tool?.toolCallId ?? null,
    tool_kind: tool?.kind ?? null,
    response_options: options,
    available_decisions: [...decisions],
  };
  if (tool?.paths && tool.paths.length > 0) payload.file_changes = tool.paths.map((path) => ({ path }));
  const input = boundedInput(toolRaw.rawInput);
  if (input !== undefined) payload.tool_input = input;
  return payload;
}

/** What the Bridge hands back when the human answered. */
export interface ApprovalResolution {
  option_id?: string | null;
  decision?: string | null;
}

/**
 * The ACP answer for a resolution. Only an offered `option_id` is accepted; `cancel_task` (or a
 * resolution without an option) answers `cancelled`, which is also what cancellation sends.
 */
export function responseForResolution(
  payload: ApprovalPayload,
  resolution: ApprovalResolution,
): acp.RequestPermissionResponse {
  const optionId = resolution.option_id ?? null;
  if (optionId === null) {
    if (resolution.decision === "cancel_task") return { outcome: { outcome: "cancelled" } };
    throw new ServerfsError("INVALID_APPROVAL_DECISION", "an ACP approval must be answered with one of the offered option_id values");
  }
  if (!payload.response_options.some((o) => o.option_id === optionId)) {
    throw new ServerfsError("INVALID_APPROVAL_DECISION", "option_id is not one of the options this request offered", {
      option_id: optionId.length > 256 ? `${optionId.slice(0, 256)}…` : optionId,
    });
  }
  return { outcome: { outcome: "selected", optionId } };
}

export const CANCELLED_OUTCOME: acp.RequestPermissionResponse = { outcome: { outcome: "cancelled" } };
