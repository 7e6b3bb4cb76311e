// The fake runtime (docs/runtimes.md): enabled only by `agent.enable_fake_runtime`. Each task
// runs a real contained child (./provider.ts) that follows the prompt grammar, so every Bridge
// path — approvals, questions, steering, cancel, crashes, process trees — is exercised for real.
import path from "node:path";
import type { FileSink } from "bun";
import { ServerfsError, isErrorCode } from "../../errors.ts";
import { FAKE_DESCRIPTOR } from "../../config/runtime-catalog.ts";
import type {
  AdapterResult,
  ProviderEventType,
  ApprovalRequest,
  QuestionRequest,
  RuntimeAdapter,
  TaskContext,
} from "../types.ts";
import type { RuntimeInfo } from "../../config/runtime-info.ts";

export const FAKE_PROVIDER_SUBCOMMAND = "__fake-provider";

/** How to start the fake provider: a compiled binary re-enters itself; dev runs the script with Bun. */
export function fakeProviderArgv(): string[] {
  // Bun places a compiled program's modules under /$bunfs/ (POSIX) or B:\~BUN\ (Windows).
  const compiled = import.meta.path.includes("$bunfs") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(import.meta.path);
  if (compiled) return [process.execPath, FAKE_PROVIDER_SUBCOMMAND];
  return [process.execPath, path.join(import.meta.dir, "provider.ts")];
}

interface Live {
  stdin: FileSink;
  cancelled: boolean;
}

export interface FakeAdapterOptions {
  /** File the provider appends "<task> <pid>" to at each turn start (tests count real turns). */
  turnLog?: string | null;
}

/**
 * What the Bridge answered to an interaction, as the adapter saw it: a refusal (e.g. REQUEST_PENDING,
 * AGENT_INTERACTION_EXPIRED) is recorded as an `interaction.error {code}` event, then rethrown.
 */
async function observed<T>(ctx: TaskContext, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    try {
      ctx.emitEvent("interaction.error", { code: err instanceof ServerfsError ? err.code : "AGENT_PROVIDER_ERROR" });
    } catch {
      // bounded event log: the error itself still propagates
    }
    throw err;
  }
}

export class FakeAdapter implements RuntimeAdapter {
  readonly name = FAKE_DESCRIPTOR.name;
  private readonly live = new Map<string, Live>();

  constructor(private readonly options: FakeAdapterOptions = {}) {}

  async probe(): Promise<RuntimeInfo> {
    return { name: FAKE_DESCRIPTOR.name, available: true, version: "phase-a", ...FAKE_DESCRIPTOR.capabilities! };
  }

  run(ctx: TaskContext): Promise<AdapterResult> {
    return this.turn(ctx);
  }

  continue(ctx: TaskContext): Promise<AdapterResult> {
    if (!ctx.continueNativeSessionId) {
      return Promise.reject(new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "no session to continue"));
    }
    return this.turn(ctx);
  }

  private async turn(ctx: TaskContext): Promise<AdapterResult> {
    const proc = await ctx.spawn({ argv: fakeProviderArgv() });
    const entry: Live = { stdin: proc.stdin, cancelled: false };
    this.live.set(ctx.taskId, entry);
    const write = (msg: Record<string, unknown>) => {
      try {
        proc.stdin.write(`${JSON.stringify(msg)}\n`);
        void proc.stdin.flush();
      } catch {
        // the provider is gone; the read loop reports it
      }
    };
    // A frame with `nowait: true` is asked without blocking the read loop (so the provider can ask
    // again meanwhile); the outcome, or the Bridge's refusal code, goes back tagged with its id.
    const askWithoutWaiting = (msg: Record<string, unknown>, ask: () => Promise<unknown>) => {
      const id = String(msg.id);
      let asked: Promise<unknown>;
      try {
        asked = ask();
      } catch (err) {
        asked = Promise.reject(err);
      }
      observed(ctx, asked).then(
        (resolution) => write({ type: `${String(msg.type)}_result`, id, resolution }),
        (err) => write({ type: "interaction_error", id, code: err instanceof ServerfsError ? err.code : "AGENT_PROVIDER_ERROR" }),
      );
    };
    try {
      write({
        type: "start",
        task_id: ctx.taskId,
        prompt: ctx.prompt,
        session_id: ctx.continueNativeSessionId,
        turn_log: this.options.turnLog ?? null,
      });
      const reader = proc.stdout.getReader();
      const decoder = new TextDecoder();
      let buf = "";
      let sessionId: string | null = null;
      let turnId: string | null = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) !== -1) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (!line.trim()) continue;
          let msg: Record<string, unknown>;
          try {
            msg = JSON.parse(line) as Record<string, unknown>;
          } catch {
            throw new ServerfsError("AGENT_PROVIDER_ERROR", "provider wrote a malformed frame");
          }
          switch (msg.type) {
            case "ids":
              sessionId = typeof msg.session_id === "string" ? msg.session_id : null;
              turnId = typeof msg.turn_id === "string" ? msg.turn_id : null;
              ctx.recordNativeIds(sessionId, turnId);
              break;
            case "event":
              // A script may name any type: the service's name check is what refuses a malformed one.
              ctx.emitEvent(String(msg.event_type) as ProviderEventType, (msg.payload ?? {}) as Record<string, unknown>);
              break;
            case "approval": {
              if (msg.nowait === true) {
                askWithoutWaiting(msg, () => ctx.requestApproval(msg.request as ApprovalRequest));
                break;
              }
              const resolution = await observed(ctx, ctx.requestApproval(msg.request as ApprovalRequest));
              ctx.emitEvent("approval.observed", { decision: resolution.decision, option_id: resolution.option_id ?? null });
              write({ type: "approval_result", resolution });
              break;
            }
            case "question": {
              if (msg.nowait === true) {
                askWithoutWaiting(msg, () => ctx.askQuestion(msg.request as QuestionRequest));
                break;
              }
              const resolution = await observed(ctx, ctx.askQuestion(msg.request as QuestionRequest));
              write({ type: "question_result", resolution });
              break;
            }
            case "result":
              reader.releaseLock();
              proc.stdin.end();
              return { finalResponse: String(msg.text), nativeSessionId: sessionId, nativeTurnId: turnId };
            case "error": {
              const code = typeof msg.code === "string" && isErrorCode(msg.code) ? msg.code : "AGENT_PROVIDER_ERROR";
              throw new ServerfsError(code, typeof msg.message === "string" ? msg.message : "provider failed");
            }
            default:
              throw new ServerfsError("AGENT_PROVIDER_ERROR", "provider sent an unknown frame");
          }
        }
      }
      if (entry.cancelled || ctx.signal.aborted) throw new ServerfsError("REQUEST_STALE", "task was cancelled");
      throw new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "provider exited without a result");
    } finally {
      this.live.delete(ctx.taskId);
    }
  }

  async sendMessage(taskId: string, message: string): Promise<void> {
    const entry = this.live.get(taskId);
    if (!entry) throw new ServerfsError("AGENT_TASK_NOT_ACTIVE", "task has no live provider");
    entry.stdin.write(`${JSON.stringify({ type: "message", text: message })}\n`);
    await entry.stdin.flush();
  }

  async cancel(taskId: string): Promise<void> {
    const entry = this.live.get(taskId);
    if (!entry || entry.cancelled) return;
    entry.cancelled = true;
    try {
      entry.stdin.write(`${JSON.stringify({ type: "cancel" })}\n`);
      await entry.stdin.flush();
    } catch {
      // already gone
    }
  }
}
