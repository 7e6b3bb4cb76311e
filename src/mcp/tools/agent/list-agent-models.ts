import { z } from "zod";
import { ServerfsError } from "../../../errors.ts";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, allowlistedRuntimes, compact, runtimeArg, rpc, type AgentToolDeps } from "./common.ts";
import type { Params } from "../../../bridge/rpc/methods.ts";

export function listAgentModelsTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "list_agent_models",
    title: "List agent models",
    description:
      "List the models a runtime offers, when the runtime can report them. Pass workdir and task_prompt to " +
      "ask for advice for one task (advisory only, never applied automatically). The id of a model is the " +
      "exact value to pass as submit_agent_task.model.",
    hints: AGENT_HINTS.read,
    input: z.strictObject({
      runtime: runtimeArg,
      workdir: z.string().nullable().default(null),
      task_prompt: z.string().nullable().default(null),
      path: z.string().default(""),
      profile: z.enum(["review", "workspace-write"]).default("workspace-write"),
    }),
    output: z.looseObject({ runtime: z.string(), status: z.string(), models: z.array(z.looseObject({})) }),
    auditArgs: (a) => ({ runtime: a.runtime }),
    handler: async (a) => {
      if (!allowlistedRuntimes(deps.registry).has(a.runtime)) {
        throw new ServerfsError("AGENT_RUNTIME_NOT_ALLOWED", `runtime '${a.runtime}' is not allowed on any workdir`);
      }
      const params: Params<"runtime.models"> = compact({ runtime: a.runtime, workdir: a.workdir, task_prompt: a.task_prompt });
      if (a.path !== "") params.path = a.path;
      if (a.profile !== "workspace-write") params.profile = a.profile;
      const r = await rpc(deps, "runtime.models", params);
      return { structured: r };
    },
  });
}
