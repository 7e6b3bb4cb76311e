// The task state machine (docs/design/task-lifecycle.md). Every status write goes through `assertTransition`.
import { ServerfsError } from "../errors.ts";

export const TASK_STATUSES = [
  "queued",
  "starting",
  "running",
  "waiting_for_approval",
  "waiting_for_question",
  "succeeded",
  "failed",
  "cancelled",
  "interrupted",
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

const ALLOWED: Record<TaskStatus, readonly TaskStatus[]> = {
  queued: ["starting", "cancelled", "interrupted"],
  starting: ["running", "failed", "cancelled", "interrupted"],
  running: ["waiting_for_approval", "waiting_for_question", "succeeded", "failed", "cancelled", "interrupted"],
  waiting_for_approval: ["running", "cancelled", "interrupted"],
  waiting_for_question: ["running", "cancelled", "interrupted"],
  succeeded: [],
  failed: [],
  cancelled: [],
  interrupted: [],
};

export function isTerminal(status: string): boolean {
  return TERMINAL_STATUSES.has(status as TaskStatus);
}

export function isWaiting(status: string): boolean {
  return status === "waiting_for_approval" || status === "waiting_for_question";
}

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return ALLOWED[from].includes(to);
}

export function assertTransition(from: TaskStatus, to: TaskStatus): void {
  if (!canTransition(from, to)) {
    throw new ServerfsError("INVALID_TASK_TRANSITION", `task cannot move from ${from} to ${to}`);
  }
}
