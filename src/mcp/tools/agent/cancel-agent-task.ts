import { z } from "zod";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function cancelAgentTaskTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "cancel_agent_task",
    title: "Cancel agent task",
    description:
      "Cancel a task: it becomes cancelled at once and its provider processes are stopped. Safe to repeat; " +
      "a finished task keeps its status.",
    hints: AGENT_HINTS.cancel,
    input: z.strictObject({ task_id: taskIdArg }),
    output: z.object({ task_id: z.string(), status: z.string(), correlation_id: correlationOut }),
    auditArgs: (a) => ({ task_id: a.task_id }),
    handler: async (a) => {
      const r = await rpc(deps, "task.cancel", { task_id: a.task_id });
      return { structured: r };
    },
  });
}
