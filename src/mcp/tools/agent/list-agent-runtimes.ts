import { z } from "zod";
import { approvalRoute, describeApprovalsPath } from "../../approvals/path.ts";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, allowlistedRuntimes, rpc, type AgentToolDeps } from "./common.ts";

const runtimeInfo = z.looseObject({ name: z.string(), available: z.boolean() });

export function listAgentRuntimesTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "list_agent_runtimes",
    title: "List agent runtimes",
    description:
      "List the coding-agent runtimes you may delegate to on at least one workdir, with what each supports " +
      "(available, version, persistent_session, live_steer, interactive_approval, interactive_question, " +
      "in_flight_recovery, model_override, model_discovery), and approvals: who answers a task's approvals and " +
      "questions in this session. Never starts or installs a provider.",
    hints: AGENT_HINTS.read,
    input: z.strictObject({}),
    output: z.object({
      runtimes: z.array(runtimeInfo),
      approvals: z.object({
        setting: z.enum(["auto", "elicitation", "tools", "terminal"]),
        in_force: z.enum(["elicitation", "tools", "terminal", "none"]),
        description: z.string(),
      }),
    }),
    handler: async (_a, ctx) => {
      const setting = deps.registry.agent.approvals;
      const approvals = { setting, in_force: approvalRoute(setting, ctx.extra.clientCapabilities), description: describeApprovalsPath(setting) };
      const allowed = allowlistedRuntimes(deps.registry);
      if (allowed.size === 0) return { structured: { runtimes: [], approvals } };
      const r = await rpc(deps, "runtime.list", {});
      const list = r.runtimes.filter((x) => allowed.has(x.name));
      return { structured: { runtimes: list, approvals } };
    },
  });
}
