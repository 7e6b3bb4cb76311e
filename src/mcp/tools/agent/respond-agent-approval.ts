import { z } from "zod";
import { assertToolsMayAnswer } from "../../approvals/path.ts";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, compact, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function respondAgentApprovalTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "respond_agent_approval",
    title: "Respond to agent approval",
    description:
      "Answer a pending approval of a task (get_agent_task → pending_request). Give exactly one of: decision " +
      "(one of the request's available_decisions: approve_once, approve_session, deny, cancel_task) or, when " +
      "the request lists response_options, the option_id of the option you choose (persistent choices such " +
      "as allow_always are exactly what they say). cancel_task cancels the whole task. Refused with " +
      "APPROVAL_PATH_NOT_ALLOWED where approvals go to the human or the terminal (list_agent_runtimes → approvals).",
    hints: AGENT_HINTS.respond,
    input: z.strictObject({
      task_id: taskIdArg,
      request_id: z.string().min(1),
      decision: z.enum(["approve_once", "approve_session", "deny", "cancel_task"]).nullable().default(null),
      option_id: z.string().min(1).nullable().default(null),
      granted_permission_ids: z.array(z.string()).nullable().default(null),
    }),
    output: z.object({ task_id: z.string(), request_id: z.string(), resolved: z.boolean(), correlation_id: correlationOut }),
    auditArgs: (a) => compact({ task_id: a.task_id, request_id: a.request_id, decision: a.decision, option_id: a.option_id }) as Record<string, string>,
    handler: async (a, ctx) => {
      assertToolsMayAnswer(deps.registry.agent.approvals, ctx.extra.clientCapabilities);
      const r = await rpc(
        deps,
        "task.approval.respond",
        compact({ task_id: a.task_id, request_id: a.request_id, decision: a.decision, option_id: a.option_id, granted_permission_ids: a.granted_permission_ids, decided_by: "assistant" }),
      );
      return { structured: r };
    },
  });
}
