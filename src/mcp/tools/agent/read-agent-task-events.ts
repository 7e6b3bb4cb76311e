import { z } from "zod";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function readAgentTaskEventsTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "read_agent_task_events",
    title: "Read agent task events",
    description:
      "Read a task's events in order (progress, agent messages, approvals, results). Pass the returned " +
      "next_after_event_id as after_event_id to continue. Host paths are shown workdir-relative.",
    hints: AGENT_HINTS.read,
    input: z.strictObject({
      task_id: taskIdArg,
      after_event_id: z.number().int().min(0).default(0),
      limit: z.number().int().min(1).max(500).default(100),
    }),
    output: z.object({ correlation_id: correlationOut, events: z.array(z.looseObject({ event_id: z.number() })), next_after_event_id: z.number() }),
    auditArgs: (a) => ({ task_id: a.task_id, after_event_id: a.after_event_id, limit: a.limit }),
    handler: async (a) => {
      const r = await rpc(deps, "task.events", { task_id: a.task_id, after_event_id: a.after_event_id, limit: a.limit });
      return { structured: r };
    },
  });
}
