import { z } from "zod";
import { assertToolsMayAnswer } from "../../approvals/path.ts";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function answerAgentQuestionTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "answer_agent_question",
    title: "Answer agent question",
    description:
      "Answer every question of a pending question request: for each question_id, selected_option_ids " +
      "(one unless multi_select) and/or free text where allow_free_text is true. A form question from an " +
      "ACP agent (payload.form) names its properties as question_id, leaves optional ones out, and may " +
      "instead be answered action decline or cancel with no answers; the answer must fit the agent's schema. Refused with " +
      "APPROVAL_PATH_NOT_ALLOWED where approvals go to the human or the terminal (list_agent_runtimes → approvals).",
    hints: AGENT_HINTS.answer,
    input: z.strictObject({
      task_id: taskIdArg,
      request_id: z.string().min(1),
      answers: z
        .array(
          z.strictObject({
            question_id: z.string(),
            selected_option_ids: z.array(z.string()).default([]),
            text: z.string().nullable().default(null),
          }),
        )
        .default([]),
      action: z.enum(["accept", "decline", "cancel"]).default("accept"),
    }),
    output: z.object({ task_id: z.string(), request_id: z.string(), resolved: z.boolean(), correlation_id: correlationOut }),
    auditArgs: (a) => ({ task_id: a.task_id, request_id: a.request_id, answer_count: a.answers.length, action: a.action }),
    handler: async (a, ctx) => {
      assertToolsMayAnswer(deps.registry.agent.approvals, ctx.extra.clientCapabilities);
      const answers = a.answers.map((x) => (x.text === null ? { question_id: x.question_id, selected_option_ids: x.selected_option_ids } : x));
      const r = await rpc(deps, "task.question.answer", {
        task_id: a.task_id,
        request_id: a.request_id,
        answers,
        decided_by: "assistant",
        ...(a.action !== "accept" ? { action: a.action } : {}),
      });
      return { structured: r };
    },
  });
}
