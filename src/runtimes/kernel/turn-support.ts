// The parts of the turn skeleton (provider-turn.ts) that stand on their own: the frame of a run,
// private diagnostics, the event-idle bound, waiting on a human that the provider may withdraw,
// and racing a wait against the turn stopping.
import * as fs from "node:fs";
import * as path from "node:path";
import { Redactor } from "./redact.ts";
import { ServerfsError } from "../../errors.ts";
import type { TaskContext } from "../types.ts";
import { removeTree } from "../../../platform/fs/remove-tree.ts";

export interface Diagnostics {
  /** Private operator diagnostics; `detail` is already bounded and redacted. */
  record(kind: string, fields: Record<string, string | number | boolean | null>): void;
}

export function cancelledError(): ServerfsError {
  return new ServerfsError("AGENT_TASK_TERMINAL", "the task was cancelled");
}

/**
 * The frame of a turn's run(): a task already cancelled starts nothing, a cancel while it runs
 * reaches `turn.cancel`, and the provider child gets a private (0700) temp directory under the
 * deployment's tmp root, removed after `turn.cleanup` once the body has ended either way.
 */
export async function runTurnFrame<T>(
  ctx: Pick<TaskContext, "signal">,
  turn: { cancel(): void; cleanup(): void },
  tmpRoot: string,
  tmpName: string,
  body: (tmpDir: string) => Promise<T>,
): Promise<T> {
  if (ctx.signal.aborted) throw cancelledError();
  const onAbort = () => turn.cancel();
  ctx.signal.addEventListener("abort", onAbort, { once: true });
  const tmpDir = path.join(tmpRoot, tmpName);
  try {
    fs.mkdirSync(tmpRoot, { recursive: true, mode: 0o700 });
    fs.mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
    return await body(tmpDir);
  } finally {
    ctx.signal.removeEventListener("abort", onAbort);
    turn.cleanup();
    removeTree(tmpDir);
  }
}

const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
const MAX_DETAIL_CHARS = 2048;

/**
 * One task's diagnostics. Provider text may carry host paths, credentials and terminal control
 * sequences, so it is blanked, redacted and bounded (its end, where errors are) before it is kept.
 */
export class TaskDiagnostics {
  /** Built on the first record: most tasks record none, and each Redactor compiles its own patterns. */
  private redactor: Redactor | null = null;

  constructor(
    private readonly sink: Diagnostics,
    private readonly runtime: string,
    private readonly ctx: Pick<TaskContext, "taskId" | "workdirRoot">,
    private readonly secrets: readonly string[] = [],
  ) {}

  record(kind: string, detail: string): void {
    this.redactor ??= new Redactor(this.ctx.workdirRoot, this.secrets);
    const redacted = this.redactor.text(detail.replace(CONTROL_CHARS, " "));
    this.sink.record(kind, { runtime: this.runtime, task_id: this.ctx.taskId, detail: redacted.slice(-MAX_DETAIL_CHARS) });
  }
}

/** `event_idle_timeout_seconds`: restarted by provider traffic, cleared while a human decides. */
export class IdleWatchdog {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly seconds: number | null,
    private readonly onIdle: (seconds: number) => void,
  ) {}

  restart(): void {
    const seconds = this.seconds;
    if (seconds === null) return;
    this.clear();
    // Past setTimeout's 32-bit range (~24.8 days) a timer fires at once; a longer bound waits that long.
    this.timer = setTimeout(() => this.onIdle(seconds), Math.min(seconds * 1000, 2_147_483_647));
  }

  clear(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * The end of a turn that went quiet: its own code (not a crash), what the task last recorded and
 * how long ago, and the setting that decides. `lastEvent` is the task's newest event; the idle
 * clock restarts on any provider traffic, so that event is never younger than the silence.
 */
export function idleTimeoutError(provider: string, seconds: number, lastEvent: { type: string; at: string } | null, nowMs: number): ServerfsError {
  let heard = "no event recorded";
  if (lastEvent !== null) {
    const atMs = Date.parse(lastEvent.at);
    const when = Number.isNaN(atMs) ? lastEvent.at : new Date(atMs).toISOString().replace(/\.\d{3}Z$/, "Z");
    const ago = Number.isNaN(atMs) ? "" : `, ${Math.max(0, Math.round((nowMs - atMs) / 1000))} s ago`;
    heard = `${lastEvent.type} at ${when}${ago}`;
  }
  return new ServerfsError(
    "AGENT_IDLE_TIMEOUT",
    `no event from ${provider} for ${seconds} s; last heard: ${heard}. If it can work silently for longer (a long build, a model that does not stream its thinking), raise [agent] event_idle_timeout_seconds`,
    { idle_seconds: seconds, last_event_type: lastEvent?.type ?? null, last_event_at: lastEvent?.at ?? null },
  );
}

/** `p`, unless `withdrawn` aborts first: the request is then stale, never answered for the human. */
export function untilWithdrawn<T>(p: Promise<T>, withdrawn: AbortSignal): Promise<T> {
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      const onAbort = () => reject(new ServerfsError("REQUEST_STALE", "the request was withdrawn"));
      if (withdrawn.aborted) onAbort();
      else withdrawn.addEventListener("abort", onAbort, { once: true });
    }),
  ]);
}

/**
 * Provider requests waiting on a human, by the provider's request id. ServerFS holds one pending
 * interaction per task, so they are brokered one after another; each one's signal aborts when the
 * provider withdraws it or the task is cancelled.
 */
export class HumanWaits {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly waits = new Map<string, AbortController>();
  /** The request being brokered now (the task's pending interaction is its); the others are queued. */
  private brokering: string | null = null;

  get size(): number {
    return this.waits.size;
  }

  enqueue<T>(key: string, broker: (withdrawn: AbortSignal) => Promise<T>): Promise<T> {
    const wait = new AbortController();
    this.waits.set(key, wait);
    const run = this.chain
      .then(() => {
        this.brokering = key;
        return broker(wait.signal);
      })
      .finally(() => {
        if (this.brokering === key) this.brokering = null;
      });
    this.chain = run.catch(() => {});
    return run.finally(() => this.waits.delete(key));
  }

  /**
   * The provider withdrew `key` itself. Being brokered: the task's pending interaction is stale,
   * not answered. Still queued: only its signal aborts, so its broker refuses without asking, and
   * the interaction pending for another request is left alone.
   */
  withdraw(key: string, ctx: Pick<TaskContext, "abandonInteraction">): void {
    const wait = this.waits.get(key);
    if (!wait) return;
    this.waits.delete(key);
    if (this.brokering === key) ctx.abandonInteraction();
    wait.abort();
  }

  abortAll(): void {
    for (const w of this.waits.values()) w.abort();
  }
}

/** `p`, unless the turn starts stopping (rejects with the reason) or the provider connection fails. */
export async function abortable<T>(p: Promise<T>, stopping: AbortSignal, failure: Promise<never> | null = null): Promise<T> {
  if (stopping.aborted) throw stopping.reason;
  let onAbort: (() => void) | null = null;
  try {
    return await Promise.race([
      p,
      failure ?? new Promise<never>(() => {}),
      new Promise<never>((_, reject) => {
        onAbort = () => reject(stopping.reason);
        stopping.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    if (onAbort !== null) stopping.removeEventListener("abort", onAbort);
  }
}
