import { z } from "zod";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function sendAgentMessageTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "send_agent_message",
    title: "Send message to agent",
    description:
      "Steer a running task with a narrow follow-up without expanding its authorized scope (only runtimes " +
      "with live_steer). For a new objective, or after the task finished, submit a new atomic task instead.",
    hints: AGENT_HINTS.steer,
    input: z.strictObject({ task_id: taskIdArg, message: z.string().min(1) }),
    output: z.object({ task_id: z.string(), accepted: z.boolean(), correlation_id: correlationOut }),
    auditArgs: (a) => ({ task_id: a.task_id, message_bytes: Buffer.byteLength(a.message) }),
    handler: async (a) => {
      const r = await rpc(deps, "task.message.send", { task_id: a.task_id, message: a.message });
      return { structured: r };
    },
  });
}
