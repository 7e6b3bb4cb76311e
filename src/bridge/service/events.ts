// The task event vocabulary as a type: what the Bridge itself records (lifecycle, recovery,
// interactions) with its exact payload, plus what adapters emit (PROVIDER_EVENT_TYPES). The
// list in docs/design/events.md is checked against TASK_EVENT_TYPES by a test.
import type { TaskStatus } from "../lifecycle.ts";
import { PROVIDER_EVENT_TYPES, type ProviderEventType } from "../../runtimes/types.ts";
import { ServerfsError } from "../../errors.ts";
import type { Advice } from "./advice.ts";

/** The advice beside the human's decision: what was advised, by which rule, and whether the decision followed it (null: nothing was advised). */
export interface AdviceOutcome {
  option_id: string | null;
  rule: string;
  followed: boolean | null;
}

type InteractionKind = "approval" | "question";

/** Who answered an interaction (docs/agent-bridge.md): the MCP tools, an MCP elicitation, `serverfs tasks`. */
export type DecidedBy = "assistant" | "human" | "operator";
const DECIDERS: ReadonlySet<string> = new Set<DecidedBy>(["assistant", "human", "operator"]);

/** The optional `decided_by` of task.approval.respond / task.question.answer, checked before anything changes. */
export function decidedBy(value: string | undefined): { decided_by?: DecidedBy } {
  if (value === undefined) return {};
  if (!DECIDERS.has(value)) throw new ServerfsError("INVALID_REQUEST", "decided_by must be assistant, human or operator");
  return { decided_by: value as DecidedBy };
}

export interface BridgeEventPayloads {
  "task.started": { runtime: string };
  "task.completed": { result_storage: "inline" | "spool"; result_size_bytes: number };
  "task.result_spooled": { size_bytes: number; sha256: string };
  "task.failed": { error_code: string };
  "task.interrupted": { error_code?: string };
  "task.cancelled": Record<string, never>;
  "task.reconciled": { status: TaskStatus; provider_active: boolean | null; error_code?: string };
  "runtime.reconcile_started": { runtime: string };
  "runtime.reconcile_finished": { runtime: string; status: string; provider_active: boolean | null };
  "runtime.stop_proof": {
    provider_started: boolean;
    proved: boolean;
    swept?: number;
    method?: string;
    survivors?: number;
    survivor_pids?: number[];
  };
  "approval.requested": { request_id: string; expires_at: string; advice: Advice };
  "approval.resolved": { decision: string; option_id?: string; option_kind?: string; decided_by?: DecidedBy; advice?: AdviceOutcome };
  "question.requested": { request_id: string; expires_at: string; advice: Advice };
  "question.answered": { question_count: number; action?: "accept" | "decline" | "cancel"; decided_by?: DecidedBy; advice?: AdviceOutcome };
  "interaction.expired": { request_id: string; kind: InteractionKind; on_arrival?: true };
  /** `reason: "withdrawn"`: the agent took the request back itself (ACP `$/cancel_request`, Codex `serverRequest/resolved`). */
  "interaction.stale": { request_id: string; reason?: "withdrawn" };
  "user.message": { bytes: number };
}

export type BridgeEventType = keyof BridgeEventPayloads;
export type TaskEventType = BridgeEventType | ProviderEventType;

const BRIDGE_EVENTS: Record<BridgeEventType, true> = {
  "task.started": true,
  "task.completed": true,
  "task.result_spooled": true,
  "task.failed": true,
  "task.interrupted": true,
  "task.cancelled": true,
  "task.reconciled": true,
  "runtime.reconcile_started": true,
  "runtime.reconcile_finished": true,
  "runtime.stop_proof": true,
  "approval.requested": true,
  "approval.resolved": true,
  "question.requested": true,
  "question.answered": true,
  "interaction.expired": true,
  "interaction.stale": true,
  "user.message": true,
};

export const BRIDGE_EVENT_TYPES = Object.keys(BRIDGE_EVENTS) as BridgeEventType[];
export const TASK_EVENT_TYPES: readonly TaskEventType[] = [...BRIDGE_EVENT_TYPES, ...PROVIDER_EVENT_TYPES];

/**
 * The shape every stored event name keeps. Adapters are typed against ProviderEventType; only
 * the fake runtime forwards script-chosen names, so this check stays at the service boundary.
 */
export function isEventName(type: unknown): type is string {
  return typeof type === "string" && /^[a-z][a-z0-9_.]{0,63}$/.test(type);
}
