// Codex server requests ↔ ServerFS interactions (docs/design/interactions.md, docs/runtimes.md).
//   approve_once → "accept", approve_session → "acceptForSession", deny → "decline",
//   cancel_task → "cancel". Nothing here ever answers a request on its own: every decision comes
//   from a human resolution. Persistent choices Codex may offer (exec-policy or network-policy
//   amendments) are never offered, because ServerFS has no "always" approvals.
import { ServerfsError } from "../../errors.ts";
import type { ApprovalDecision, ApprovalRequest, ApprovalResolution, QuestionRequest, QuestionResolution } from "../types.ts";

export const COMMAND_APPROVAL = "item/commandExecution/requestApproval";
export const FILE_CHANGE_APPROVAL = "item/fileChange/requestApproval";
export const PERMISSIONS_APPROVAL = "item/permissions/requestApproval";
export const USER_INPUT = "item/tool/requestUserInput";

const PROVIDER_FOR: Record<ApprovalDecision, string> = {
  approve_once: "accept",
  approve_session: "acceptForSession",
  deny: "decline",
  cancel_task: "cancel",
};
const PUBLIC_FOR: Record<string, ApprovalDecision> = {
  accept: "approve_once",
  acceptForSession: "approve_session",
  decline: "deny",
  cancel: "cancel_task",
};
const ORDER: ApprovalDecision[] = ["approve_once", "approve_session", "deny", "cancel_task"];
const MAX_TEXT = 8192;

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v.slice(0, MAX_TEXT) : undefined);

/**
 * Decisions offered for a command approval: Codex's `availableDecisions`, reverse-mapped. `deny`
 * is always added — 0.169 honours `decline` even when it lists only accept/cancel
 * (docs/runtimes.md, Codex), and refusing is never an authority gain. `cancel_task` always stays.
 */
export function offeredCommandDecisions(available: unknown): ApprovalDecision[] {
  const set = new Set<ApprovalDecision>(["deny", "cancel_task"]);
  if (Array.isArray(available) && available.length > 0) {
    for (const d of available) if (typeof d === "string" && PUBLIC_FOR[d]) set.add(PUBLIC_FOR[d]);
  } else {
    set.add("approve_once");
  }
  return ORDER.filter((d) => set.has(d));
}

export function commandApproval(params: Record<string, unknown>, relativeCwd: string): ApprovalRequest {
  const command = str(params.command);
  const network = params.networkApprovalContext;
  return {
    category: network ? "network_permission" : "command",
    title: command ? `Run ${command.length > 200 ? `${command.slice(0, 200)}…` : command}` : "Run a command",
    available_decisions: offeredCommandDecisions(params.availableDecisions),
    ...(str(params.reason) ? { reason: str(params.reason) } : {}),
    ...(command ? { command_display: command } : {}),
    relative_cwd: relativeCwd,
    ...(network ? { network_approval_context: network } : {}),
  };
}

export function fileChangeApproval(params: Record<string, unknown>, changedPaths: string[]): ApprovalRequest {
  return {
    category: "file_change",
    title: changedPaths.length > 0 ? `Change ${changedPaths.length} file(s)` : "Change files",
    available_decisions: [...ORDER],
    ...(str(params.reason) ? { reason: str(params.reason) } : {}),
    ...(changedPaths.length > 0 ? { file_changes: changedPaths.slice(0, 256).map((p) => ({ path: p })) } : {}),
    ...(str(params.grantRoot) ? { blocked_path: str(params.grantRoot) } : {}),
  };
}

/** Permission requests carry a profile `{network, fileSystem}`; each non-null part is one grantable id. */
export function permissionsApproval(params: Record<string, unknown>): ApprovalRequest {
  const profile = (params.permissions ?? {}) as Record<string, unknown>;
  const requested = Object.entries(profile)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => ({ permission_id: k, kind: k === "network" ? "network" : "file_system", details: v }));
  return {
    category: "provider_permission",
    title: "Grant additional permissions",
    available_decisions: [...ORDER],
    ...(str(params.reason) ? { reason: str(params.reason) } : {}),
    requested_permissions: requested,
  };
}

export function decisionResponse(resolution: ApprovalResolution): { decision: string } {
  return { decision: PROVIDER_FOR[resolution.decision] };
}

/** Grant the chosen subset (all requested when none named) for the turn or the session; nothing on deny/cancel. */
export function permissionsResponse(params: Record<string, unknown>, resolution: ApprovalResolution): Record<string, unknown> {
  const scope = resolution.decision === "approve_session" ? "session" : "turn";
  if (resolution.decision === "deny" || resolution.decision === "cancel_task") return { permissions: {}, scope: "turn" };
  const profile = (params.permissions ?? {}) as Record<string, unknown>;
  const wanted = resolution.granted_permission_ids.length > 0 ? new Set(resolution.granted_permission_ids) : null;
  const granted: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(profile)) {
    if (v === null || v === undefined) continue;
    if (wanted === null || wanted.has(k)) granted[k] = v;
  }
  return { permissions: granted, scope };
}

interface CodexQuestion {
  id: string;
  header?: string;
  question: string;
  isOther?: boolean;
  isSecret?: boolean;
  options?: Array<{ label: string; description?: string }> | null;
}

function codexQuestions(params: Record<string, unknown>): CodexQuestion[] {
  const qs = params.questions;
  if (!Array.isArray(qs) || qs.length === 0 || qs.length > 16) throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex asked an invalid question set");
  const seen = new Set<string>();
  return qs.map((q) => {
    const o = q as Record<string, unknown>;
    if (typeof o.id !== "string" || o.id.length === 0 || seen.has(o.id) || typeof o.question !== "string") {
      throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex asked an invalid question");
    }
    seen.add(o.id);
    const options = Array.isArray(o.options) ? (o.options as Array<Record<string, unknown>>) : null;
    return {
      id: o.id,
      question: o.question,
      isOther: o.isOther === true,
      isSecret: o.isSecret === true,
      ...(typeof o.header === "string" ? { header: o.header } : {}),
      options:
        options?.map((opt) => ({
          label: typeof opt.label === "string" ? opt.label : "",
          ...(typeof opt.description === "string" ? { description: opt.description } : {}),
        })) ?? null,
    };
  });
}

/**
 * `requestUserInput` → a ServerFS question set: option ids `opt_<q>_<o>`, free text when Codex
 * allows "other" or offers no options. Secret questions are refused: an answer typed into a
 * remote MCP host is not a place for secrets.
 */
export function userInputQuestion(params: Record<string, unknown>): QuestionRequest {
  const qs = codexQuestions(params);
  if (qs.some((q) => q.isSecret)) throw new ServerfsError("PERMISSION_OUTSIDE_POLICY", "codex asked for a secret; ServerFS does not relay secrets");
  return {
    questions: qs.map((q, qi) => ({
      question_id: q.id,
      prompt: q.header && q.header !== q.question ? `${q.header}: ${q.question}` : q.question,
      options: (q.options ?? []).map((o, oi) => ({ option_id: `opt_${qi}_${oi}`, label: o.label, ...(o.description ? { description: o.description } : {}) })),
      multi_select: false,
      allow_free_text: q.isOther === true || (q.options ?? []).length === 0,
    })),
  };
}

/** Answers go back as the chosen labels, then the free text, per Codex question id. */
export function userInputResponse(params: Record<string, unknown>, resolution: QuestionResolution): Record<string, unknown> {
  const qs = codexQuestions(params);
  const answers: Record<string, { answers: string[] }> = {};
  qs.forEach((q, qi) => {
    const a = resolution.answers.find((x) => x.question_id === q.id);
    const out: string[] = [];
    for (const id of a?.selected_option_ids ?? []) {
      const m = /^opt_(\d+)_(\d+)$/.exec(id);
      const opt = m && Number(m[1]) === qi ? q.options?.[Number(m[2])] : undefined;
      if (opt) out.push(opt.label);
    }
    if (a?.text !== undefined && a.text.length > 0) out.push(a.text);
    answers[q.id] = { answers: out };
  });
  return { answers };
}
