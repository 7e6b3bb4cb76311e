// Steering a task from outside: a live message to the running provider, and cancel
// (terminal-first and idempotent; docs/design/task-lifecycle.md#cancel).
import { ServerfsError } from "../../errors.ts";
import { utf8Bytes } from "../../common/utf8.ts";
import { leaseFiles } from "../deployment.ts";
import { readGuard } from "../guard.ts";
import { isTerminal } from "../lifecycle.ts";
import { CANCEL_PROOF_SLACK_MS } from "../limits.ts";
import type { CancelResult, Result, WorkdirHoldReason } from "../rpc/methods.ts";
import type { TaskRow } from "../store/tasks.ts";
import { bounded, type ServiceCore } from "./core.ts";

export type { CancelResult };

export async function sendMessage(core: ServiceCore, taskId: string, message: string): Promise<Result<"task.message.send">> {
  if (utf8Bytes(message) > core.limits.max_message_bytes) {
    throw new ServerfsError("AGENT_MESSAGE_TOO_LARGE", `message exceeds ${core.limits.max_message_bytes} bytes`);
  }
  const task = core.store.require(taskId);
  if (isTerminal(task.status)) throw new ServerfsError("AGENT_TASK_TERMINAL", "task is finished; submit a continuation instead");
  if (task.status === "queued" || task.status === "starting") throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "task has not started yet");
  const adapter = core.deps.adapters.get(task.runtime);
  if (!adapter) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "runtime is not available");
  if (!adapter.sendMessage) throw new ServerfsError("AGENT_PROVIDER_ERROR", "this runtime does not support live steering");
  if (!core.active.has(taskId)) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "task is not running in this Bridge");
  await adapter.sendMessage(taskId, message);
  core.record(taskId, "user.message", { bytes: utf8Bytes(message) });
  return { task_id: taskId, accepted: true, correlation_id: task.correlation_id };
}

/**
 * Terminal-first, then wait (bounded by the stop grace plus the KILL phase) until the run let go of
 * the workdir, so the answer says whether a writer may start there now. Never a guess: a stop still
 * running is `stop_pending`, an unprovable one `stop_not_proved`.
 */
export async function cancel(core: ServiceCore, taskId: string, gc: () => void): Promise<CancelResult> {
  const task = core.store.require(taskId);
  const run = core.active.get(taskId);
  if (isTerminal(task.status) && !run) {
    gc();
  } else if (run) {
    // A finished task that is still stopping is not aborted again: its outcome stands.
    if (!isTerminal(task.status)) run.abort("cancel");
    await bounded(run.released, core.stopGraceMs + CANCEL_PROOF_SLACK_MS);
  } else {
    // Not run by this process (cannot normally happen after restart reconciliation): persist only.
    core.note(taskId, "task.cancelled", {});
    core.store.transition(taskId, "cancelled");
    core.watchers.notify(taskId);
  }
  const after = core.store.require(taskId);
  const hold = workdirHold(core, after);
  return { task_id: taskId, status: after.status, correlation_id: after.correlation_id, workdir_free: hold === null, workdir_hold_reason: hold };
}

/** What of the workdir this task still holds: its run's lease, or its recovery guard. */
function workdirHold(core: ServiceCore, task: TaskRow): WorkdirHoldReason | null {
  if (task.profile !== "workspace-write") return null;
  if (core.active.has(task.task_id)) return "stop_pending";
  const guard = readGuard(leaseFiles(core.deps.registry, task.workdir_alias).guardFile);
  // An unreadable guard blocks writers like a present one (fail closed), so it is not "free" either.
  if (guard.state === "unsafe" || (guard.state === "present" && guard.record.task_id === task.task_id)) return "stop_not_proved";
  return null;
}
