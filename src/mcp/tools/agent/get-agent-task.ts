// get_agent_task with an optional long wait: the Bridge parks the call until the task's status
// changes, a new interaction is pending, or time is up. The wait is cut into slices so that a
// caller who sent a progressToken gets progress notifications meanwhile; no polling loop.
import { z } from "zod";
import { askIfPending, takeHumanAnswer } from "../../approvals/index.ts";
import { defineTool, type McpTool, type ToolContext } from "../../tool.ts";
import { AGENT_HINTS, rpc, taskIdArg, type AgentToolDeps } from "./common.ts";
import type { TaskView } from "../../../bridge/rpc/methods.ts";

const SLICE_SECONDS = 5;
const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

function fingerprint(t: TaskView): string {
  return `${t.status}|${String(t.pending_request_id)}`;
}

async function progress(ctx: ToolContext, elapsed: number, total: number, status: string): Promise<void> {
  const token = ctx.extra?._meta?.progressToken;
  if (token === undefined) return;
  try {
    await ctx.extra.sendNotification({
      method: "notifications/progress",
      params: { progressToken: token, progress: elapsed, total, message: `task is ${status}` },
    });
  } catch {
    // a client that went away does not fail the wait
  }
}

export function getAgentTaskTool(deps: AgentToolDeps): McpTool {
  return defineTool({
    name: "get_agent_task",
    title: "Get agent task",
    description:
      "Read a task: status, timestamps, deadline, last_event_at (when the agent was last heard from), error, the final response (inline, or a preview when " +
      "final_response_truncated is true: read the rest with read_agent_task_result) and any pending_request " +
      "(an approval or question waiting for you) with its advice {option_id, reason, rule}: what serverfs's rules recommend " +
      "(option_id null when no rule recommends an option, and always for a question). Advice is never applied: the " +
      "request stays pending until someone answers it. usage is the agent's latest report of tokens in context (used of size) " +
      "and its session cost, or null. wait_seconds (0-50) waits until the status changes, a new " +
      "interaction is pending, or the time is up — use it instead of polling. Where approvals go to the human " +
      "(list_agent_runtimes → approvals), a pending request is shown to them as a form by this call and " +
      "human_answer says what they did; a declined form leaves the request pending.",
    hints: AGENT_HINTS.read,
    input: z.strictObject({
      task_id: taskIdArg,
      wait_seconds: z.number().int().min(0).max(50).default(0),
    }),
    output: z.looseObject({
      task_id: z.string(),
      status: z.string(),
      last_event_at: z
        .string()
        .nullable()
        .describe("When the task last recorded an event (ISO-8601). A running task whose last event is old is stuck or working silently; event_idle_timeout_seconds ends it with AGENT_IDLE_TIMEOUT."),
      usage: z
        .looseObject({
          used: z.number().nullable(),
          size: z.number().nullable(),
          cost: z.object({ amount: z.number(), currency: z.string() }).nullable(),
          updated_at: z.string(),
        })
        .nullable()
        .optional()
        .describe("The agent's latest usage report: tokens in context (used), the context window (size), the session's cumulative cost; null before any."),
    }),
    auditArgs: (a) => ({ task_id: a.task_id, wait_seconds: a.wait_seconds }),
    handler: async (a, ctx) => {
      const answered = await takeHumanAnswer(deps, a.task_id, ctx);
      if (answered) return answered;
      let view = await rpc(deps, "task.get", { task_id: a.task_id });
      const asked = await askIfPending(deps, view, ctx);
      if (asked) return asked;
      const start = fingerprint(view);
      const until = Date.now() + a.wait_seconds * 1000;
      while (!TERMINAL.has(view.status) && fingerprint(view) === start && !ctx.signal.aborted) {
        const left = Math.ceil((until - Date.now()) / 1000);
        if (left <= 0) break;
        const slice = Math.min(SLICE_SECONDS, left);
        view = await rpc(deps, "task.get", { task_id: a.task_id, wait_seconds: slice }, (slice + 15) * 1000);
        if (fingerprint(view) === start) await progress(ctx, a.wait_seconds - Math.max(0, Math.ceil((until - Date.now()) / 1000)), a.wait_seconds, view.status);
      }
      return (await askIfPending(deps, view, ctx)) ?? { structured: view };
    },
  });
}
