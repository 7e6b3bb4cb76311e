// The elicitation path of get_agent_task (docs/tools.md#approval-paths): answer rounds first (the
// human's form came back), then, when the path in force is elicitation, a pending request is put
// to the human instead of being returned for the assistant to answer.
import type { AgentToolDeps } from "../tools/agent/common.ts";
import { rpc } from "../tools/agent/common.ts";
import type { ToolContext, ToolReply } from "../tool.ts";
import { type ElicitationOutcome, answerOf, askHuman, bridgeAnswer, formOf, pendingOf } from "./elicit.ts";
import { approvalRoute } from "./path.ts";

type View = Record<string, unknown> & { task_id: string; status: string; last_event_at: string | null };

/** On an answer round: send the human's answer (or leave the request pending) and return the task as it now is. */
export async function takeHumanAnswer(deps: AgentToolDeps, taskId: string, ctx: ToolContext): Promise<ToolReply<View> | null> {
  const round = answerOf(ctx, taskId);
  if (!round) return null;
  const { state, response } = round;
  let outcome: ElicitationOutcome["outcome"];
  if (response.kind === "elicit" && response.action === "accept") {
    const before = await rpc(deps, "task.get", { task_id: taskId });
    const pending = pendingOf(before);
    // A stale form (the request was answered elsewhere or expired) goes to the Bridge as is: it says REQUEST_STALE.
    const payload = pending?.request_id === state.request_id ? pending.payload : null;
    const answer = bridgeAnswer(state, response.content ?? {}, payload);
    if (answer.method === "task.approval.respond") await rpc(deps, answer.method, answer.params);
    else await rpc(deps, answer.method, answer.params);
    outcome = "answered";
  } else {
    // Declined, dismissed or no answer at all: the request stays pending; nothing is decided.
    outcome = response.kind === "elicit" && response.action === "decline" ? "declined" : "cancelled";
    // Except for an ACP agent's own form: the human declining or dismissing it is an answer the
    // agent asked for (ACP's decline / cancel), so it is sent on; it decides nothing for the agent.
    if (response.kind === "elicit" && state.kind === "question") {
      const pending = pendingOf(await rpc(deps, "task.get", { task_id: taskId }));
      if (pending?.request_id === state.request_id && formOf(pending.payload)) {
        const action = outcome === "declined" ? "decline" : "cancel";
        await rpc(deps, "task.question.answer", { task_id: taskId, request_id: state.request_id, answers: [], action, decided_by: "human" });
      }
    }
  }
  const view = (await rpc(deps, "task.get", { task_id: taskId })) as View;
  const human: ElicitationOutcome = { request_id: state.request_id, kind: state.kind, outcome, decided_by: "human" };
  return { structured: { ...view, human_answer: human } };
}

/** When the elicitation path is in force and the task waits on a request, ask the human. */
export async function askIfPending(deps: AgentToolDeps, view: Record<string, unknown>, ctx: ToolContext): Promise<ToolReply<View> | null> {
  const pending = pendingOf(view);
  if (!pending) return null;
  if (approvalRoute(deps.registry.agent.approvals, ctx.extra.clientCapabilities) !== "elicitation") return null;
  return { inputRequired: await askHuman(String(view.task_id), pending) };
}
