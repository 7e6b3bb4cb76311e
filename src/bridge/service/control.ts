// Steering a task from outside: a live message to the running provider, and cancel
// (terminal-first and idempotent; docs/design/task-lifecycle.md#cancel).
import { ServerfsError } from "../../errors.ts";
import { utf8Bytes } from "../../common/utf8.ts";
import { isTerminal } from "../lifecycle.ts";
import type { CancelResult, Result } from "../rpc/methods.ts";
import type { ServiceCore } from "./core.ts";

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

export function cancel(core: ServiceCore, taskId: string, gc: () => void): CancelResult {
  const task = core.store.require(taskId);
  if (isTerminal(task.status)) {
    gc();
    return { task_id: taskId, status: task.status, correlation_id: task.correlation_id };
  }
  const run = core.active.get(taskId);
  if (run) {
    run.abort("cancel");
  } else {
    // Not run by this process (cannot normally happen after restart reconciliation): persist only.
    core.note(taskId, "task.cancelled", {});
    core.store.transition(taskId, "cancelled");
    core.watchers.notify(taskId);
  }
  const after = core.store.require(taskId);
  return { task_id: taskId, status: after.status, correlation_id: after.correlation_id };
}
