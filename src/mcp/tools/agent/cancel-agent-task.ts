import { z } from "zod";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function cancelAgentTaskTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "cancel_agent_task",
    title: "Cancel agent task",
    description:
      "Cancel a task: it becomes cancelled at once, then the call returns once its provider processes are proved " +
      "stopped (a few seconds at most). workdir_free=true means a new workspace-write task on the same workdir is " +
      "accepted now; otherwise workdir_hold_reason says why not: 'stop_pending' (still stopping: WORKDIR_BUSY, " +
      "retry shortly) or 'stop_not_proved' (processes may have survived: WORKDIR_RECOVERY_REQUIRED until recovery " +
      "proves them gone). Safe to repeat; a finished task keeps its status.",
    hints: AGENT_HINTS.cancel,
    input: z.strictObject({ task_id: taskIdArg }),
    output: z.object({
      task_id: z.string(),
      status: z.string(),
      correlation_id: correlationOut,
      workdir_free: z.boolean(),
      workdir_hold_reason: z.enum(["stop_pending", "stop_not_proved"]).nullable(),
    }),
    auditArgs: (a) => ({ task_id: a.task_id }),
    handler: async (a) => {
      const r = await rpc(deps, "task.cancel", { task_id: a.task_id });
      return { structured: r };
    },
  });
}
