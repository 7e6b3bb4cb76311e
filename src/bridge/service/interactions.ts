// The interaction broker (docs/design/interactions.md): one pending approval or question per task,
// its expiry, and the human's answer delivered to the waiting adapter. The request row and its
// events are written before the waiter can settle, so a reader never sees an answer without them.
import { ServerfsError, toServerfsError } from "../../errors.ts";
import type {
  ApprovalRequest,
  ApprovalResolution,
  QuestionAnswer,
  QuestionRequest,
  QuestionResolution,
} from "../../runtimes/types.ts";
import { utf8Bytes } from "../../common/utf8.ts";
import { newId } from "../ids.ts";
import { isWaiting } from "../lifecycle.ts";
import { nowIso, type InteractionRow } from "../store/tasks.ts";
import type { ServiceCore } from "./core.ts";
import { decidedBy } from "./events.ts";
import { normalizeApproval, normalizeQuestion, validateAnswers, validateApprovalAnswer } from "./interaction-rules.ts";
import type { ActiveRun, RunBroker } from "./active-run.ts";
import { answerAction, resolveForm } from "./form-answers.ts";
import type { ResolvedResult } from "../rpc/methods.ts";
import { type Advice, Advisor } from "./advice.ts";
import type { AdviceOutcome } from "./events.ts";

type Kind = "approval" | "question";

export interface ApprovalResponseParams {
  task_id: string;
  request_id: string;
  decision?: string;
  option_id?: string;
  granted_permission_ids?: unknown;
  decided_by?: string;
}

export type Resolved = ResolvedResult;

export class InteractionBroker implements RunBroker {
  /** Advisory only: its output is stored and shown beside the request, never used to answer it. */
  readonly advisor: Advisor;

  constructor(
    private readonly core: ServiceCore,
    /** How a cancel_task decision cancels its task (the facade's task.cancel). */
    private readonly cancelTask: (taskId: string) => Promise<unknown>,
  ) {
    this.advisor = new Advisor(core.deps.registry.agent.advice_rules);
  }

  async openApproval(run: ActiveRun, req: ApprovalRequest): Promise<ApprovalResolution> {
    const normalized = normalizeApproval(req);
    return (await this.open(run, "approval", normalized as Record<string, unknown>)) as ApprovalResolution;
  }

  async openQuestion(run: ActiveRun, req: QuestionRequest): Promise<QuestionResolution> {
    const normalized = normalizeQuestion(req);
    return (await this.open(run, "question", normalized as unknown as Record<string, unknown>)) as QuestionResolution;
  }

  /** A request expires at the earlier of interaction_timeout_seconds from now and the task deadline. */
  private expiresAt(taskId: string): string {
    const deadline = this.core.store.require(taskId).deadline_at;
    const byTimeout = Date.now() + this.core.limits.interaction_timeout_seconds * 1000;
    const ms = deadline ? Math.min(Date.parse(deadline), byTimeout) : byTimeout;
    return new Date(ms).toISOString();
  }

  private async open(run: ActiveRun, kind: Kind, payload: Record<string, unknown>): Promise<unknown> {
    const { core } = this;
    if (run.signal.aborted) throw new ServerfsError("REQUEST_STALE", "the task is no longer active");
    const clean = run.redactor.payload(payload);
    const json = JSON.stringify(clean);
    if (utf8Bytes(json) > core.limits.max_interaction_bytes) {
      throw new ServerfsError("AGENT_INTERACTION_TOO_LARGE", `interaction exceeds ${core.limits.max_interaction_bytes} bytes`);
    }
    // One pending request per task: refuse before anything (waiter, event) is created.
    const current = core.store.require(run.taskId);
    if (current.pending_request_id !== null) throw new ServerfsError("REQUEST_PENDING", "the task already has a pending request");
    if (current.status !== "running") throw new ServerfsError("INVALID_TASK_TRANSITION", `task is ${current.status}`);
    const requestId = newId("req_");
    // Advice reads the redacted request (paths workdir-relative, never a host path) and nothing else.
    const on = { runtime: current.runtime, relativeCwd: current.relative_cwd };
    const advice = kind === "approval" ? this.advisor.adviseApproval(clean as ApprovalRequest, on) : this.advisor.adviseQuestion(on);
    const adviceJson = JSON.stringify(advice);
    const expiresAt = this.expiresAt(run.taskId);
    if (Date.parse(expiresAt) <= Date.now()) return this.expiredOnArrival(run, kind, requestId, json, expiresAt, adviceJson);
    const row: InteractionRow = {
      request_id: requestId,
      task_id: run.taskId,
      kind,
      status: "pending",
      payload_json: json,
      created_at: nowIso(),
      expires_at: expiresAt,
      resolved_at: null,
      resolution_json: null,
      advice_json: adviceJson,
    };
    const waiter = run.openWaiter(requestId);
    core.record(run.taskId, kind === "approval" ? "approval.requested" : "question.requested", { request_id: requestId, expires_at: expiresAt, advice });
    core.store.openInteraction(row);
    core.watchers.notify(run.taskId);
    const deadline = core.store.require(run.taskId).deadline_at;
    if (!deadline || Date.parse(expiresAt) < Date.parse(deadline)) {
      run.addTimer(() => {
        const t = core.store.get(run.taskId);
        if (t && t.pending_request_id === requestId && isWaiting(t.status)) run.abort("interaction_timeout");
      }, Math.max(0, Date.parse(expiresAt) - Date.now()));
    }
    return waiter;
  }

  /**
   * A request that is already expired when its waiter is created fails that waiter with
   * AGENT_INTERACTION_EXPIRED. interaction_timeout_seconds is at least 1, so this happens only when
   * the task deadline has passed before its timer fired: the request is recorded stale (never
   * pending), and the task deadline handles the task (interrupted/AGENT_TASK_TIMED_OUT).
   */
  private expiredOnArrival(run: ActiveRun, kind: Kind, requestId: string, json: string, expiresAt: string, adviceJson: string): never {
    try {
      this.core.store.recordExpiredInteraction({
        request_id: requestId,
        task_id: run.taskId,
        kind,
        status: "stale",
        payload_json: json,
        created_at: nowIso(),
        expires_at: expiresAt,
        resolved_at: null,
        resolution_json: null,
        advice_json: adviceJson,
      });
    } catch (err) {
      this.core.log("interaction.record_failed", { task_id: run.taskId, code: toServerfsError(err).code });
    }
    this.core.note(run.taskId, "interaction.expired", { request_id: requestId, kind, on_arrival: true });
    run.abort("timeout");
    throw new ServerfsError("AGENT_INTERACTION_EXPIRED", "the interaction expired before it could be asked");
  }

  /** The provider withdrew its pending request: it becomes stale and its waiter fails. */
  abandon(run: ActiveRun): void {
    const { core } = this;
    const task = core.store.get(run.taskId);
    if (!task?.pending_request_id) return;
    const requestId = task.pending_request_id;
    try {
      core.record(run.taskId, "interaction.stale", { request_id: requestId, reason: "withdrawn" });
      core.store.closeInteraction(requestId, "stale", { withdrawn: true });
    } catch {
      return;
    }
    run.rejectWaiter(requestId, new ServerfsError("REQUEST_STALE", "the provider withdrew the request"));
    core.watchers.notify(run.taskId);
  }

  /** Checks shared by both answers, up to the kind check; returns the pending request row. */
  private pendingFor(taskId: string, requestId: string): InteractionRow {
    const { core } = this;
    if (taskId.length === 0 || requestId.length === 0) throw new ServerfsError("INVALID_REQUEST", "task_id and request_id must be non-empty");
    const req = core.store.getInteraction(requestId);
    if (!req) throw new ServerfsError("REQUEST_NOT_FOUND", `request '${requestId.slice(0, 64)}' not found`);
    if (req.status !== "pending") {
      throw new ServerfsError(req.status === "resolved" ? "REQUEST_ALREADY_RESOLVED" : "REQUEST_STALE", "request is no longer pending");
    }
    const task = core.store.require(taskId);
    if (task.pending_request_id !== requestId) throw new ServerfsError("REQUEST_STALE", "request does not belong to this task's pending interaction");
    if (req.expires_at && req.expires_at <= nowIso()) {
      // A late answer interrupts the task (if its timer has not yet) and is REQUEST_STALE. When
      // expires_at is the task deadline, the deadline is what ran out (AGENT_TASK_TIMED_OUT).
      const run = core.active.get(taskId);
      const deadlinePassed = task.deadline_at !== null && task.deadline_at <= nowIso();
      if (run) run.abort(deadlinePassed ? "timeout" : "interaction_timeout");
      throw new ServerfsError("REQUEST_STALE", "request has expired");
    }
    return req;
  }

  async respondApproval(params: ApprovalResponseParams): Promise<Resolved> {
    const { core } = this;
    const { task_id: taskId, request_id: requestId } = params;
    const by = decidedBy(params.decided_by);
    const req = this.pendingFor(taskId, requestId);
    if (req.kind !== "approval") throw new ServerfsError("INVALID_APPROVAL_DECISION", "request is not an approval");
    const payload = JSON.parse(req.payload_json) as ApprovalRequest;
    const resolution = validateApprovalAnswer(payload, {
      ...(params.decision !== undefined ? { decision: params.decision } : {}),
      ...(params.option_id !== undefined ? { option_id: params.option_id } : {}),
      ...(params.granted_permission_ids !== undefined ? { granted_permission_ids: params.granted_permission_ids } : {}),
    });
    const advice = adviceOutcome(req, resolution.option_id ?? resolution.decision);
    core.record(
      taskId,
      "approval.resolved",
      resolution.option_id
        ? { decision: resolution.decision, option_id: resolution.option_id, option_kind: resolution.option_kind!, ...by, ...advice }
        : { decision: resolution.decision, ...by, ...advice },
    );
    const task = core.store.closeInteraction(requestId, "resolved", resolution);
    const run = core.active.get(taskId);
    if (resolution.decision === "cancel_task") run?.rejectWaiter(requestId, new ServerfsError("REQUEST_STALE", "task cancelled"));
    else run?.resolveWaiter(requestId, resolution);
    core.watchers.notify(taskId);
    if (resolution.decision === "cancel_task") await this.cancelTask(taskId);
    return { task_id: taskId, request_id: requestId, resolved: true, correlation_id: task.correlation_id };
  }

  answerQuestion(taskId: string, requestId: string, answers: unknown, decided?: string, action?: string): Resolved {
    const { core } = this;
    const by = decidedBy(decided);
    const req = this.pendingFor(taskId, requestId);
    if (req.kind !== "question") throw new ServerfsError("INVALID_QUESTION_ANSWER", "request is not a question");
    const payload = JSON.parse(req.payload_json) as QuestionRequest;
    const how = answerAction(payload, action);
    let resolution: QuestionResolution;
    if (payload.form !== undefined) {
      // A form question (an ACP agent's elicitation): checked against the agent's own schema.
      resolution = resolveForm(payload, how, answers);
      core.record(taskId, "question.answered", { question_count: resolution.answers.length, action: how, ...by, ...adviceOutcome(req, null) });
    } else {
      const normalized: QuestionAnswer[] = validateAnswers(payload, answers);
      resolution = { answers: normalized };
      core.record(taskId, "question.answered", { question_count: normalized.length, ...by, ...adviceOutcome(req, null) });
    }
    const task = core.store.closeInteraction(requestId, "resolved", resolution);
    core.active.get(taskId)?.resolveWaiter(requestId, resolution);
    core.watchers.notify(taskId);
    return { task_id: taskId, request_id: requestId, resolved: true, correlation_id: task.correlation_id };
  }
}

/** The stored advice beside what the human chose (an option_id, or a decision for requests without options). */
function adviceOutcome(req: InteractionRow, chosen: string | null): { advice?: AdviceOutcome } {
  if (req.advice_json === null) return {};
  const advice = JSON.parse(req.advice_json) as Advice;
  const followed = advice.option_id === null || chosen === null ? null : advice.option_id === chosen;
  return { advice: { option_id: advice.option_id, rule: advice.rule, followed } };
}
