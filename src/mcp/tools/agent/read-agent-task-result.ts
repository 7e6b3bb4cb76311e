import { z } from "zod";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, correlationOut, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";

export function readAgentTaskResultTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "read_agent_task_result",
    title: "Read agent task result",
    description:
      "Read a large (spooled) final result in UTF-8-safe chunks: start at offset_bytes 0 and continue from " +
      "next_offset_bytes until eof. Small results are inline in get_agent_task instead.",
    hints: AGENT_HINTS.read,
    input: z.strictObject({
      task_id: taskIdArg,
      offset_bytes: z.number().int().min(0).default(0),
      max_bytes: z.number().int().min(1).max(65_536).default(65_536),
    }),
    output: z.object({ text: z.string(), offset_bytes: z.number(), next_offset_bytes: z.number(), eof: z.boolean(), correlation_id: correlationOut }),
    auditArgs: (a) => ({ task_id: a.task_id, offset_bytes: a.offset_bytes, max_bytes: a.max_bytes }),
    handler: async (a) => {
      const r = await rpc(deps, "task.result.read", { task_id: a.task_id, offset_bytes: a.offset_bytes, max_bytes: a.max_bytes });
      return { structured: r };
    },
  });
}
