// Claude Code's `canUseTool` ↔ ServerFS interactions (docs/runtimes.md, Claude), shared by
// qodercli, whose permission prompts have the same shape.
//   approve_once  → allow with the input unchanged
//   approve_session → allow + echo the provider's own rule suggestions (addRules) scoped to the
//                   session; offered only when Claude Code supplied such a suggestion. Mode
//                   switches (setMode acceptEdits) and extra directories are never echoed: they
//                   would allow more than the action the human saw.
//   deny          → deny, the turn goes on
//   cancel_task   → deny with interrupt
// AskUserQuestion becomes a ServerFS question: ids q<index>, option_id = label, free text always
// allowed, answers returned in `updatedInput.answers` as {question text: "a, b, free text"}.
import type { PermissionResult, PermissionUpdate } from "@anthropic-ai/claude-agent-sdk";
import { ServerfsError } from "../../errors.ts";
import { untilWithdrawn } from "./turn-support.ts";
import type { ApprovalDecision, ApprovalRequest, ApprovalResolution, QuestionRequest, QuestionResolution, TaskContext } from "../types.ts";

export interface ToolPermissionContext {
  suggestions?: unknown[];
  blockedPath?: string;
  decisionReason?: string;
  title?: string;
  description?: string;
  toolUseID?: string;
}

export type { PermissionResult };

const FILE_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);
const MAX_FIELD_CHARS = 4096;
export const DENY_MESSAGE = "The user denied this action.";

/** Long string fields (a Write's content) are cut so the approval stays under the interaction cap. */
export function boundedInput(input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) {
    out[k] = typeof v === "string" && v.length > MAX_FIELD_CHARS ? `${v.slice(0, MAX_FIELD_CHARS)}… [${v.length - MAX_FIELD_CHARS} more characters]` : v;
  }
  return out;
}

/** Provider rule suggestions, rescoped to this session; nothing is ever written to a settings file. */
export function sessionSuggestions(suggestions: unknown[] | undefined): PermissionUpdate[] {
  if (!Array.isArray(suggestions)) return [];
  return suggestions
    .filter((s): s is Record<string, unknown> => s !== null && typeof s === "object" && (s as { type?: unknown }).type === "addRules")
    .filter((s) => (s as { behavior?: unknown }).behavior === "allow" && Array.isArray((s as { rules?: unknown }).rules))
    .map((s) => ({ ...s, destination: "session" }) as PermissionUpdate);
}

export function approvalFor(tool: string, input: Record<string, unknown>, opts: ToolPermissionContext): ApprovalRequest {
  const decisions: ApprovalDecision[] = ["approve_once"];
  if (sessionSuggestions(opts.suggestions).length > 0) decisions.push("approve_session");
  decisions.push("deny", "cancel_task");
  const command = typeof input.command === "string" ? input.command : undefined;
  const filePath = typeof input.file_path === "string" ? input.file_path : typeof input.notebook_path === "string" ? input.notebook_path : undefined;
  const category: ApprovalRequest["category"] =
    tool === "Bash" ? "command" : FILE_TOOLS.has(tool) ? "file_change" : tool.startsWith("mcp__") ? "mcp_tool" : tool === "WebFetch" || tool === "WebSearch" ? "network_permission" : "other";
  const title = typeof opts.title === "string" && opts.title.length > 0 ? opts.title : command ? `Run ${command.slice(0, 200)}` : filePath ? `${tool} ${filePath}` : `Use ${tool}`;
  return {
    category,
    title: title.slice(0, 512),
    available_decisions: decisions,
    tool,
    tool_input: boundedInput(input),
    ...(typeof opts.decisionReason === "string" ? { reason: opts.decisionReason.slice(0, 2048) } : {}),
    ...(command ? { command_display: command.slice(0, 8192) } : {}),
    ...(filePath && FILE_TOOLS.has(tool) ? { file_changes: [{ path: filePath }] } : {}),
    ...(typeof opts.blockedPath === "string" ? { blocked_path: opts.blockedPath } : {}),
  };
}

export function permissionResult(input: Record<string, unknown>, opts: ToolPermissionContext, resolution: ApprovalResolution): PermissionResult {
  switch (resolution.decision) {
    case "approve_once":
      return { behavior: "allow", updatedInput: input, decisionClassification: "user_temporary" };
    case "approve_session":
      return { behavior: "allow", updatedInput: input, updatedPermissions: sessionSuggestions(opts.suggestions), decisionClassification: "user_temporary" };
    case "deny":
      return { behavior: "deny", message: DENY_MESSAGE, decisionClassification: "user_reject" };
    case "cancel_task":
      return { behavior: "deny", message: DENY_MESSAGE, interrupt: true, decisionClassification: "user_reject" };
  }
}

interface AskQuestion {
  question: string;
  header?: string;
  multiSelect: boolean;
  options: Array<{ label: string; description?: string }>;
}

function askQuestions(input: Record<string, unknown>): AskQuestion[] {
  const qs = input.questions;
  if (!Array.isArray(qs) || qs.length === 0 || qs.length > 16) throw new ServerfsError("INVALID_QUESTION_ANSWER", "AskUserQuestion without questions");
  const seen = new Set<string>();
  return qs.map((raw) => {
    const q = (raw ?? {}) as Record<string, unknown>;
    if (typeof q.question !== "string" || q.question.length === 0) throw new ServerfsError("INVALID_QUESTION_ANSWER", "AskUserQuestion with an empty question");
    // Answers are keyed by question text, so two equal texts could not be told apart.
    if (seen.has(q.question)) throw new ServerfsError("INVALID_QUESTION_ANSWER", "AskUserQuestion repeats a question");
    seen.add(q.question);
    const options = Array.isArray(q.options) ? (q.options as Array<Record<string, unknown>>) : [];
    const labels = new Set<string>();
    return {
      question: q.question,
      ...(typeof q.header === "string" ? { header: q.header } : {}),
      multiSelect: q.multiSelect === true,
      options: options
        .filter((o) => typeof o.label === "string" && o.label.length > 0 && !labels.has(o.label) && labels.add(o.label))
        .map((o) => ({ label: o.label as string, ...(typeof o.description === "string" ? { description: o.description } : {}) })),
    };
  });
}

export function questionFor(input: Record<string, unknown>): QuestionRequest {
  return {
    questions: askQuestions(input).map((q, i) => ({
      question_id: `q${i}`,
      prompt: q.header && q.header !== q.question ? `${q.header}: ${q.question}` : q.question,
      options: q.options.map((o) => ({ option_id: o.label, label: o.label, ...(o.description ? { description: o.description } : {}) })),
      multi_select: q.multiSelect,
      allow_free_text: true,
    })),
  };
}

export function answeredInput(input: Record<string, unknown>, resolution: QuestionResolution): Record<string, unknown> {
  const answers: Record<string, string> = {};
  askQuestions(input).forEach((q, i) => {
    const a = resolution.answers.find((x) => x.question_id === `q${i}`);
    const parts = [...(a?.selected_option_ids ?? [])];
    if (a?.text !== undefined && a.text.length > 0) parts.push(a.text);
    answers[q.question] = parts.join(", ");
  });
  return { ...input, answers };
}

/**
 * One permission prompt (Claude Code's, or qodercli's in the same shape) put to the human:
 * AskUserQuestion as a ServerFS question, any other tool as an approval. Rejects as the
 * interaction does (expiry, staleness) or with REQUEST_STALE once `withdrawn` aborts.
 */
export async function askHuman(
  ctx: Pick<TaskContext, "askQuestion" | "requestApproval">,
  tool: string,
  input: Record<string, unknown>,
  context: ToolPermissionContext,
  withdrawn: AbortSignal,
): Promise<PermissionResult> {
  if (tool === "AskUserQuestion") {
    let question;
    try {
      question = questionFor(input);
    } catch {
      return { behavior: "deny", message: "ServerFS could not relay these questions." };
    }
    const answers = await untilWithdrawn(ctx.askQuestion(question), withdrawn);
    return { behavior: "allow", updatedInput: answeredInput(input, answers) };
  }
  const resolution = await untilWithdrawn(ctx.requestApproval(approvalFor(tool, input, context)), withdrawn);
  return permissionResult(input, context, resolution);
}
