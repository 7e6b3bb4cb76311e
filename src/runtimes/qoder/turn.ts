// One ServerFS task (or continuation) on `qodercli` in its non-interactive streaming mode: spawn it
// in the task's containment set with permission mode "default" and permission prompts routed to
// us over stdio (so neither a user's bypass mode nor its own auto mode can skip the human), apply
// the Agent proxy with `set_proxy` before the prompt (docs/runtimes.md, Qoder), send one user
// message, broker every `can_use_tool` to a human, and end with a proved stop of the set.
// Cancel: withdraw a pending human wait (deny + interrupt), send `interrupt`, then stop the set.
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { childEnvExtras } from "../kernel/child-env.ts";
import { DENY_MESSAGE, askHuman, type ToolPermissionContext } from "../kernel/tool-permissions.ts";
import { ProviderTurn } from "../kernel/provider-turn.ts";
import { cancelledError, type Diagnostics } from "../kernel/turn-support.ts";
import type { AdapterResult, TaskContext } from "../types.ts";
import { QoderStream } from "./stream.ts";

const CONTROL_TIMEOUT_MS = 10_000;
const INTERRUPT_BOUND_MS = 3_000;
/** What qodercli 1.1.52 answers when no Qoder account is logged in (docs/runtimes.md, Qoder). */
const NOT_LOGGED_IN = /not logged in|please run \/login|authentication (is )?required/i;

export interface QoderTurnOptions {
  exe: string;
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds">;
  tmpRoot: string;
  diagnostics: Diagnostics;
}

/** The argv of one streaming qodercli turn; a new session gets an id we choose, so it is known before launch. */
export function qoderArgv(exe: string, sessionId: string, resume: boolean, model: string | null): string[] {
  return [
    exe,
    "--print",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
    "--permission-mode",
    "default",
    resume ? "--resume" : "--session-id",
    sessionId,
    ...(model !== null ? ["--model", model] : []),
  ];
}

export class QoderTurn extends ProviderTurn {
  private stream: QoderStream | null = null;
  private interrupted = false;
  private resultDone!: (m: Record<string, unknown>) => void;
  private readonly result = new Promise<Record<string, unknown>>((r) => (this.resultDone = r));

  constructor(
    ctx: TaskContext,
    private readonly opts: QoderTurnOptions,
  ) {
    super(ctx, {
      runtime: "qoder",
      provider: "qodercli",
      failedText: "qodercli failed",
      tmpPrefix: "qoder",
      tmpRoot: opts.tmpRoot,
      idleSeconds: opts.agent.event_idle_timeout_seconds,
      diagnostics: opts.diagnostics,
    });
  }

  protected override async interrupt(): Promise<void> {
    if (this.interrupted || this.stream === null || this.stream.closed) return;
    this.interrupted = true;
    await this.stream.control({ subtype: "interrupt" }, INTERRUPT_BOUND_MS).catch(() => {});
  }

  protected override fail(err: ServerfsError): void {
    this.stream?.fail(err);
  }

  protected override connectionFailure(): Promise<never> | null {
    return this.stream ? this.stream.failure : null;
  }

  protected override async launch(tmpDir: string): Promise<void> {
    const resume = this.ctx.continueNativeSessionId;
    const sessionId = resume ?? crypto.randomUUID();
    // Known before launch, so a crash mid-turn stays resumable.
    this.adoptSession(sessionId);
    const env = childEnvExtras({ proxy: this.opts.agent.proxy, useProxy: this.opts.config.use_proxy, tmpDir });
    const argv = qoderArgv(this.opts.exe, sessionId, resume !== null, this.ctx.requestedModel);
    const proc = await this.spawnChild(argv, env, new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", "qodercli could not be started"));
    this.stream = new QoderStream(proc, {
      onMessage: (m) => this.onMessage(m),
      onControlRequest: (id, req) => this.onControlRequest(id, req),
      onControlCancel: (id) => this.onControlCancel(id),
    });
  }

  protected override async converse(): Promise<AdapterResult> {
    const proxy = this.opts.config.use_proxy && this.opts.agent.proxy.enabled ? this.opts.agent.proxy.url : null;
    if (proxy !== null) {
      const stream = this.stream!;
      await this.abortable(
        stream.control({ subtype: "set_proxy", proxy }, CONTROL_TIMEOUT_MS).catch(() => {
          throw new ServerfsError("AGENT_RUNTIME_NOT_READY", "qodercli did not accept the Agent proxy");
        }),
      );
    }
    this.touchIdle();
    this.stream!.sendUser(this.ctx.prompt);
    const result = await this.abortable(this.result);
    this.idle.clear();
    if (result.is_error === true || result.subtype !== "success") {
      if (this.cancelRequested) throw cancelledError();
      const text = typeof result.result === "string" ? result.result : "";
      this.diagnostics.record("result_error", text || String(result.subtype ?? "error"));
      if (NOT_LOGGED_IN.test(text)) throw new ServerfsError("AGENT_AUTH_REQUIRED", "qodercli is not logged in for this user; log in with qodercli (or set QODER_PAT in the provider env file)");
      throw new ServerfsError("AGENT_PROVIDER_ERROR", `qodercli ended the turn with ${typeof result.subtype === "string" ? result.subtype.slice(0, 48) : "an error"}`);
    }
    return this.finished(typeof result.result === "string" ? result.result : "");
  }

  private onMessage(m: Record<string, unknown>): void {
    this.touchIdle();
    if (m.type === "system" && m.subtype === "init") {
      this.adoptSession(m.session_id);
      this.emit("turn.started", {});
    } else if (m.type === "assistant") {
      const content = (m.message as { content?: unknown } | undefined)?.content;
      if (!Array.isArray(content)) return;
      for (const block of content as Array<Record<string, unknown>>) {
        if (block.type === "text" && typeof block.text === "string" && block.text.length > 0) this.emit("agent.message", { text: block.text });
        else if (block.type === "tool_use" && typeof block.name === "string") {
          const input = (block.input ?? {}) as Record<string, unknown>;
          const id = typeof block.id === "string" ? block.id : null;
          if (typeof input.command === "string") this.emit("command.started", { command: input.command.slice(0, 4096), tool_use_id: id });
          else this.emit("tool.started", { tool: block.name, tool_use_id: id });
        }
      }
    } else if (m.type === "result") {
      this.adoptSession(m.session_id);
      this.resultDone(m);
    }
  }

  private onControlRequest(requestId: string, req: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (req.subtype !== "can_use_tool") {
      this.emit("provider.request_refused", { method: String(req.subtype ?? "unknown").slice(0, 64) });
      return Promise.reject(new ServerfsError("PERMISSION_OUTSIDE_POLICY", "ServerFS does not answer this request"));
    }
    return this.humanWaits.enqueue(requestId, (withdrawn) => this.broker(req, withdrawn));
  }

  /** qodercli withdrew a request (e.g. after an interrupt): stale, never answered for the human. */
  private onControlCancel(requestId: string): void {
    this.humanWaits.withdraw(requestId, this.ctx);
  }

  private async broker(req: Record<string, unknown>, withdrawn: AbortSignal): Promise<Record<string, unknown>> {
    const refusal = { behavior: "deny", message: DENY_MESSAGE, interrupt: true };
    if (this.stopping.signal.aborted || withdrawn.aborted) return refusal;
    const tool = typeof req.tool_name === "string" ? req.tool_name : typeof req.display_name === "string" ? req.display_name : "unknown";
    const input = req.input !== null && typeof req.input === "object" && !Array.isArray(req.input) ? (req.input as Record<string, unknown>) : {};
    const context: ToolPermissionContext = {
      suggestions: Array.isArray(req.permission_suggestions) ? req.permission_suggestions : Array.isArray(req.suggestions) ? req.suggestions : undefined,
      ...(typeof req.blocked_path === "string" ? { blockedPath: req.blocked_path } : {}),
      ...(typeof req.decision_reason === "string" ? { decisionReason: req.decision_reason } : {}),
      ...(typeof req.title === "string" ? { title: req.title } : {}),
    };
    try {
      return (await this.withHuman(() => askHuman(this.ctx, tool, input, context, withdrawn))) as Record<string, unknown>;
    } catch (err) {
      if (!this.stopping.signal.aborted && !withdrawn.aborted) this.stream?.fail(toServerfsError(err, "AGENT_PROVIDER_ERROR"));
      return refusal;
    }
  }

  /** End qodercli's input (it exits on EOF); the kernel then stops the set with proof. */
  protected override async close(): Promise<void> {
    if (this.proc === null) return;
    if (this.cancelRequested) await this.interrupt();
    this.stream?.endInput();
    this.stream?.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "the task ended"));
  }
}
