// The runtime adapter interface (docs/runtimes.md; events in docs/design/events.md). The Bridge service owns the task:
// state, lease, guard, events, interactions, deadlines and the proof that a provider stopped.
// An adapter only talks to its provider. It starts provider processes ONLY through `ctx.spawn`,
// so every process it starts is in the task's containment set and the service — not the
// adapter — proves they are gone before a lease or recovery guard is released.
import type { ContainedProcess, StopEvidence } from "../../platform/types.ts";
import type { FormSchema, FormValue } from "./acp/elicitation-schema.ts";
import type { RuntimeInfo } from "../config/runtime-info.ts";

export type ApprovalDecision = "approve_once" | "approve_session" | "deny" | "cancel_task";
export const APPROVAL_DECISIONS: readonly ApprovalDecision[] = ["approve_once", "approve_session", "deny", "cancel_task"];

/**
 * Every event type an adapter may emit (docs/design/events.md lists them with their payloads).
 * Payloads are provider-derived: the service redacts and bounds them, so they stay open records.
 */
export const PROVIDER_EVENT_TYPES = [
  "turn.started",
  "agent.message",
  "agent.thought",
  "plan.updated",
  "mode.changed",
  "usage.updated",
  "tool.started",
  "tool.updated",
  "tool.completed",
  "command.started",
  "file_change.started",
  "item.started",
  "item.completed",
  "permission.denied",
  "provider.error",
  "provider.request_refused",
  "acp.request_refused",
  "acp.elicitation_declined",
  "acp.update_unknown",
  "interaction.error",
  "approval.observed",
] as const;
export type ProviderEventType = (typeof PROVIDER_EVENT_TYPES)[number];

export type ResponseOptionKind = "allow_once" | "allow_always" | "reject_once" | "reject_always";

/** What an adapter asks a human to approve. Paths may be absolute: the service redacts. */
export interface ApprovalRequest {
  category: "command" | "file_change" | "provider_permission" | "network_permission" | "mcp_tool" | "other";
  title: string;
  /** Decisions the provider offers; `cancel_task` is always accepted by the service. */
  available_decisions: ApprovalDecision[];
  /**
   * Exact provider options (ACP). When present the human answers with `option_id`, and
   * the adapter receives that id verbatim; `decision` is then only ever `cancel_task`.
   */
  response_options?: Array<{ option_id: string; label: string; kind: ResponseOptionKind }>;
  reason?: string;
  command_display?: string;
  relative_cwd?: string;
  file_changes?: Array<{ path: string }>;
  requested_permissions?: Array<{ permission_id: string; kind: string; details?: unknown }>;
  tool?: string;
  tool_input?: unknown;
  blocked_path?: string;
  [extra: string]: unknown;
}

export interface ApprovalResolution {
  decision: ApprovalDecision;
  /** Set iff the request offered response_options and the human chose one. */
  option_id?: string;
  /**
   * The chosen option's own kind, recorded beside the derived `decision`: a persistent
   * `allow_always`/`reject_always` must stay visible as such, never read as approve_session/deny.
   */
  option_kind?: ResponseOptionKind;
  granted_permission_ids: string[];
}

export interface QuestionRequest {
  questions: Array<{
    question_id: string;
    prompt: string;
    options: Array<{ option_id: string; label: string; description?: string; preview?: string }>;
    multi_select: boolean;
    allow_free_text: boolean;
  }>;
  /**
   * Set when the question is an ACP agent's form (`elicitation/create`): the checked schema the
   * answer must fit, and the agent's message. `questions` then has one entry per property.
   */
  form?: FormQuestion;
}

export interface FormQuestion {
  message: string;
  schema: FormSchema;
}

/** How a human answered a form: accept with content, or decline / cancel (both reach the agent). */
export type FormAction = "accept" | "decline" | "cancel";

export interface QuestionAnswer {
  question_id: string;
  selected_option_ids: string[];
  text?: string;
}

export interface QuestionResolution {
  answers: QuestionAnswer[];
  /** Form questions only: what the human did, and for accept the content checked against the schema. */
  action?: FormAction;
  content?: Record<string, FormValue>;
}

/** A provider child, always contained. argv[0] absolute (or resolved by the adapter). */
export interface ProviderSpawn {
  argv: string[];
  /** Extra variables on top of the Bridge's scrubbed provider environment. */
  env?: Record<string, string>;
  /** Defaults to ctx.cwd. */
  cwd?: string;
  stderrLimitBytes?: number;
}

export interface TaskContext {
  readonly taskId: string;
  readonly runId: string;
  readonly workdir: string;
  readonly workdirRoot: string;
  /** Resolved host path the task starts in. */
  readonly cwd: string;
  readonly relativeCwd: string;
  readonly profile: "review" | "workspace-write";
  readonly prompt: string;
  readonly requestedModel: string | null;
  /** Set for continuations: the prior task's native session id. */
  readonly continueNativeSessionId: string | null;
  /** Aborted on cancel, deadline, interaction expiry or Bridge shutdown. */
  readonly signal: AbortSignal;
  /** Start a provider process in this task's containment set. */
  spawn(spec: ProviderSpawn): Promise<ContainedProcess>;
  /** Append an event (redacted and bounded by the service). Throws on bounds. */
  emitEvent(type: ProviderEventType, payload: Record<string, unknown>): void;
  /** The task's newest recorded event (the Bridge's own included), for messages about silence. */
  lastEvent(): { type: string; at: string } | null;
  requestApproval(request: ApprovalRequest): Promise<ApprovalResolution>;
  askQuestion(request: QuestionRequest): Promise<QuestionResolution>;
  /** The provider withdrew its pending request (e.g. it resolved it itself). */
  abandonInteraction(): void;
  /** Persist native ids as soon as known, so a crash mid-turn stays resumable. */
  recordNativeIds(sessionId: string | null, turnId: string | null): void;
  /** Adapters that measure their provider (ACP) keep a snapshot keyed by a config fingerprint. */
  saveCapabilities(fingerprint: string, snapshot: unknown): void;
}

export interface AdapterResult {
  finalResponse: string;
  nativeSessionId?: string | null;
  nativeTurnId?: string | null;
}

export type ReconcileStatus = "REATTACHED" | "SESSION_RESUMABLE" | "NOT_RECOVERABLE" | "UNKNOWN";

export interface ReconcileResult {
  status: ReconcileStatus;
  /** false only with proof; null = unknown. */
  providerActive: boolean | null;
  detail: string;
}

/** The task facts an adapter may see when reconciling after a restart. */
export interface TaskFacts {
  taskId: string;
  runId: string | null;
  status: string;
  nativeSessionId: string | null;
  nativeTurnId: string | null;
  providerStarted: boolean;
}

export interface RuntimeServices {
  /** Read a capability snapshot previously saved through TaskContext.saveCapabilities. */
  loadCapabilities(fingerprint: string): { snapshot: unknown; measured_at: string } | null;
}

export interface RuntimeAdapter {
  readonly name: string;
  /** Cheap and read-only; never starts a provider. Returns available:false rather than throwing. */
  probe(): Promise<RuntimeInfo>;
  listModels?(): Promise<Record<string, unknown>>;
  /** Fresh task. Must honour ctx.signal and return or throw promptly once it is aborted. */
  run(ctx: TaskContext): Promise<AdapterResult>;
  /** Continuation; requires ctx.continueNativeSessionId. Defaults to run. */
  continue?(ctx: TaskContext): Promise<AdapterResult>;
  /** Steer a running task, or throw (AGENT_PROVIDER_ERROR / AGENT_TASK_NOT_ACTIVE). */
  sendMessage?(taskId: string, message: string): Promise<void>;
  /** Best-effort, idempotent provider-level cancel; the service bounds it to 10 s. */
  cancel(taskId: string): Promise<void>;
  /**
   * After a restart: what the adapter can say about a task's provider. The service combines it
   * with the platform sweep of the task's run marker; default UNKNOWN/null.
   */
  reconcile?(task: TaskFacts): Promise<ReconcileResult>;
  close?(): Promise<void>;
}

/** How adapters are built: one factory per runtime family, registered with the service. */
export interface AdapterFactory {
  (services: RuntimeServices): RuntimeAdapter;
}

export type { StopEvidence };
