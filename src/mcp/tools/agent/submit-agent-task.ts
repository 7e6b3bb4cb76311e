import { z } from "zod";
import { bridgeConfigIdentity } from "../../../config/bridge-identity.ts";
import { defineTool, type McpTool } from "../../tool.ts";
import { AGENT_HINTS, authorizeSubmit, compact, correlationOut, profileArg, rpc, runtimeArg, type AgentToolDeps } from "./common.ts";

export function submitAgentTaskTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "submit_agent_task",
    title: "Submit agent task",
    description:
      "Delegate one narrow authorized objective to a coding agent in a workdir. State the allowed mutation " +
      "scope and stop conditions in the prompt. Keep the task atomic: one objective per task; for a follow-up " +
      "after a task finished, submit a new task with continue_from_task_id. Returns at once with status " +
      "'queued' (it never waits for completion): follow it with get_agent_task (wait_seconds to wait without " +
      "polling loops) and answer approvals or questions it raises. This does not weaken or bypass provider " +
      "safety checks. Use a fresh idempotency_key per logical objective and reuse it only to retry a submit " +
      "whose outcome is uncertain.",
    hints: AGENT_HINTS.submit,
    input: z.strictObject({
      runtime: runtimeArg,
      workdir: z.string().describe("Workdir alias (see list_workdirs: agent_mode and agent_runtimes)."),
      prompt: z.string().min(1).describe("The objective, its allowed scope and stop conditions."),
      path: z.string().default("").describe("Starting directory relative to the workdir root; '' is the root."),
      profile: profileArg,
      continue_from_task_id: z.string().nullable().default(null).describe("Continue the native session of a finished task."),
      correlation_id: z.string().nullable().default(null).describe("Opaque label echoed on the task and its events (≤ 256 bytes)."),
      idempotency_key: z.string().nullable().default(null).describe("Retry handle: the same key and request return the same task."),
      model: z.string().nullable().default(null).describe("Exact model id from list_agent_models; omit to keep the runtime's default."),
    }),
    output: z.looseObject({
      task_id: z.string(),
      status: z.string(),
      correlation_id: correlationOut,
      idempotency_key: z.string().nullable(),
    }),
    auditArgs: (a) =>
      compact({ runtime: a.runtime, profile: a.profile, idempotency_key: a.idempotency_key, correlation_id: a.correlation_id }) as Record<string, string>,
    handler: async (a) => {
      const path = await authorizeSubmit(deps, a);
      const r = await rpc(
        deps,
        "task.submit",
        compact({
          runtime: a.runtime,
          workdir: a.workdir,
          path,
          profile: a.profile,
          prompt: a.prompt,
          model: a.model,
          continue_from_task_id: a.continue_from_task_id,
          correlation_id: a.correlation_id,
          idempotency_key: a.idempotency_key,
          // The Bridge refuses a task under a configuration other than the one this serve read.
          config_identity: bridgeConfigIdentity(deps.registry),
        }),
      );
      return { structured: r };
    },
  });
}
