// Session hygiene at the end of a task: an agent that advertises `sessionCapabilities.close` is
// sent `session/close` for the task's session before its transport is closed, so it can cancel
// leftover work and free what it holds for the session. An agent that does not advertise it is
// never sent one. Best effort and bounded: a close that fails or does not answer in time is only
// a diagnostic, and the containment stop that follows proves the agent gone either way.
import type * as acp from "@agentclientprotocol/sdk";

/** How long an agent gets to answer `session/close`, at most. */
export const MAX_SESSION_CLOSE_MS = 5000;

/** Whether `initialize` advertised `session/close` (`agentCapabilities.sessionCapabilities.close` is an object). */
export function advertisesSessionClose(init: acp.InitializeResponse): boolean {
  const caps = (init.agentCapabilities ?? {}) as { sessionCapabilities?: unknown };
  const session = caps.sessionCapabilities;
  if (!session || typeof session !== "object") return false;
  const close = (session as { close?: unknown }).close;
  return close !== undefined && close !== null && typeof close === "object";
}
