// One ServerFS task (or continuation) on Claude Code through the Claude Agent SDK: the SDK drives
// the CLI's stream-json protocol, and we start the CLI (spawnClaudeCodeProcess) so it lives in the
// task's containment set. permissionMode is pinned to "default" and canUseTool is always set, so
// a user's bypass/auto mode cannot skip the human (docs/runtimes.md, Claude). The prompt is a
// one-message stream kept open until the turn's result, which is what lets `interrupt()` work.
// Cancel: withdraw a pending human wait (deny + interrupt to the CLI), `interrupt()`, then the
// containment set is stopped with proof — the SDK's own abort is never trusted for that.
import type { ContainedProcess } from "../../../platform/types.ts";
import type { AgentConfig, NativeRuntimeConfig } from "../../config/types.ts";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { childEnvExtras } from "../acp/child-env.ts";
import { IdleWatchdog, TaskDiagnostics, abortable, cancelledError, runTurnFrame, stopWithProof, type Diagnostics } from "../native/turn-support.ts";
import type { AdapterResult, ProviderEventType, TaskContext } from "../types.ts";
import { ContainedSpawn } from "./contained-spawn.ts";
import { DENY_MESSAGE, askHuman, type PermissionResult, type ToolPermissionContext } from "./permissions.ts";

const INTERRUPT_BOUND_MS = 3_000;
const DRAIN_AFTER_RESULT_MS = 5_000;
const MAX_ID_CHARS = 512;

export interface ClaudeTurnOptions {
  exe: string;
  config: NativeRuntimeConfig;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds">;
  tmpRoot: string;
  diagnostics: Diagnostics;
  /** Which settings the CLI loads; the workdir's own (project/local) are not trusted by default. */
  settingSources: Array<"user" | "project" | "local">;
}

type SdkModule = typeof import("@anthropic-ai/claude-agent-sdk");
type Query = ReturnType<SdkModule["query"]>;

export class ClaudeTurn {
  private readonly stopping = new AbortController();
  private readonly sdkAbort = new AbortController();
  private query: Query | null = null;
  private spawned: ContainedSpawn | null = null;
  private sessionId: string | null = null;
  private cancelRequested = false;
  private endInput!: () => void;
  private readonly inputDone = new Promise<void>((r) => (this.endInput = r));
  private interactionChain: Promise<unknown> = Promise.resolve();
  private readonly humanWaits = new Set<AbortController>();
  private readonly idle: IdleWatchdog;
  private idleFailure: ServerfsError | null = null;
  private readonly diagnostics: TaskDiagnostics;

  constructor(
    private readonly ctx: TaskContext,
    private readonly opts: ClaudeTurnOptions,
  ) {
    this.diagnostics = new TaskDiagnostics(opts.diagnostics, "claude", ctx);
    this.idle = new IdleWatchdog(opts.agent.event_idle_timeout_seconds, (seconds) => {
      this.idleFailure = new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `claude code sent nothing for ${seconds} s`);
      this.stopping.abort(this.idleFailure);
      void this.interruptThenAbort();
    });
  }

  cancel(): void {
    if (this.cancelRequested) return;
    this.cancelRequested = true;
    for (const w of this.humanWaits) w.abort();
    this.stopping.abort(cancelledError());
    void this.interruptThenAbort();
  }

  private async interruptThenAbort(): Promise<void> {
    const q = this.query;
    if (q !== null) {
      await Promise.race([q.interrupt().catch(() => {}), new Promise((r) => setTimeout(r, INTERRUPT_BOUND_MS))]);
    }
    this.endInput();
    this.sdkAbort.abort();
  }

  run(): Promise<AdapterResult> {
    return runTurnFrame(this.ctx, this, this.opts.tmpRoot, `claude-${this.ctx.runId}`, (tmpDir) => this.drive(tmpDir));
  }

  /** After the run, whatever its end: no idle timer, and the prompt stream ended. */
  cleanup(): void {
    this.idle.clear();
    this.endInput();
  }

  private async drive(tmpDir: string): Promise<AdapterResult> {
    let result: AdapterResult;
    try {
      result = await this.converse(tmpDir);
    } catch (err) {
      const failure = this.cancelRequested ? cancelledError() : (this.idleFailure ?? toServerfsError(err, "AGENT_PROVIDER_ERROR", "claude code failed"));
      if (!this.cancelRequested && !(err instanceof ServerfsError)) this.diagnostics.record("sdk_error", err instanceof Error ? err.message : "error");
      await this.teardown();
      throw failure;
    }
    await this.teardown();
    return result;
  }

  private async converse(tmpDir: string): Promise<AdapterResult> {
    const sdk: SdkModule = await import("@anthropic-ai/claude-agent-sdk");
    if (this.cancelRequested) throw cancelledError();
    const env = childEnvExtras({ proxy: this.opts.agent.proxy, useProxy: this.opts.config.use_proxy, tmpDir });
    // A Bridge-owned CLI must not replace its own binary under the operator.
    env.DISABLE_AUTOUPDATER = "1";
    const prompt = this.ctx.prompt;
    const inputDone = this.inputDone;
    async function* input() {
      yield { type: "user" as const, message: { role: "user" as const, content: prompt }, parent_tool_use_id: null, session_id: "" };
      await inputDone;
    }
    this.query = sdk.query({
      prompt: input(),
      options: {
        cwd: this.ctx.cwd,
        env,
        pathToClaudeCodeExecutable: this.opts.exe,
        permissionMode: "default",
        settingSources: this.opts.settingSources,
        systemPrompt: { type: "preset", preset: "claude_code" },
        abortController: this.sdkAbort,
        ...(this.ctx.continueNativeSessionId !== null ? { resume: this.ctx.continueNativeSessionId } : {}),
        ...(this.ctx.requestedModel !== null ? { model: this.ctx.requestedModel } : {}),
        canUseTool: (tool, toolInput, ctx) => this.canUseTool(tool, toolInput, ctx as ToolPermissionContext & { signal: AbortSignal }),
        spawnClaudeCodeProcess: (o) => {
          const argv = [o.command, ...o.args];
          const extra: Record<string, string> = {};
          for (const [k, v] of Object.entries(o.env)) if (typeof v === "string") extra[k] = v;
          this.spawned = new ContainedSpawn(this.ctx.spawn({ argv, env: extra, ...(o.cwd ? { cwd: o.cwd } : {}), stderrLimitBytes: 64 * 1024 }));
          return this.spawned;
        },
      },
    });
    let final: AdapterResult | null = null;
    this.touchIdle();
    const iterator = this.query[Symbol.asyncIterator]();
    for (;;) {
      const next = await abortable(iterator.next(), this.stopping.signal);
      if (next.done) break;
      this.touchIdle();
      const msg = next.value as Record<string, unknown>;
      if (msg.type === "system" && msg.subtype === "init") this.adoptSession(msg.session_id);
      else if (msg.type === "assistant") this.onAssistant(msg);
      else if (msg.type === "result") {
        this.idle.clear();
        final = this.onResult(msg);
        // The turn is over: end the input so the CLI exits, and drain what is left, bounded.
        this.endInput();
        await Promise.race([drain(iterator), new Promise((r) => setTimeout(r, DRAIN_AFTER_RESULT_MS))]);
        break;
      }
    }
    if (this.cancelRequested) throw cancelledError();
    if (final === null) throw new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "claude code ended without a result");
    return final;
  }

  private adoptSession(raw: unknown): void {
    if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_ID_CHARS || this.sessionId === raw) return;
    this.sessionId = raw;
    this.ctx.recordNativeIds(raw, null);
    this.emit("turn.started", {});
  }

  private onAssistant(msg: Record<string, unknown>): void {
    const content = (msg.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return;
    for (const block of content as Array<Record<string, unknown>>) {
      if (block.type === "text" && typeof block.text === "string" && block.text.length > 0) this.emit("agent.message", { text: block.text });
      else if (block.type === "tool_use" && typeof block.name === "string") {
        const id = typeof block.id === "string" ? block.id : null;
        const input = (block.input ?? {}) as Record<string, unknown>;
        if (block.name === "Bash" && typeof input.command === "string") this.emit("command.started", { command: input.command.slice(0, 4096), tool_use_id: id });
        else if (typeof input.file_path === "string") this.emit("file_change.started", { tool: block.name, tool_use_id: id, input: { file_path: input.file_path } });
        else this.emit("tool.started", { tool: block.name, tool_use_id: id });
      }
    }
  }

  private onResult(msg: Record<string, unknown>): AdapterResult {
    this.adoptSession(msg.session_id);
    if (msg.subtype !== "success" || msg.is_error === true) {
      if (this.cancelRequested) throw cancelledError();
      this.diagnostics.record("result_error", typeof msg.subtype === "string" ? msg.subtype : "error");
      throw new ServerfsError("AGENT_PROVIDER_ERROR", `claude code ended the turn with ${typeof msg.subtype === "string" ? msg.subtype.slice(0, 48) : "an error"}`);
    }
    const denials = Array.isArray(msg.permission_denials) ? msg.permission_denials.length : 0;
    if (denials > 0) this.emit("permission.denied", { count: denials });
    return { finalResponse: typeof msg.result === "string" ? msg.result : "", nativeSessionId: this.sessionId, nativeTurnId: null };
  }

  private canUseTool(tool: string, input: Record<string, unknown>, opts: ToolPermissionContext & { signal: AbortSignal }): Promise<PermissionResult> {
    const run = this.interactionChain.then(() => this.broker(tool, input, opts));
    this.interactionChain = run.catch(() => {});
    return run;
  }

  private async broker(tool: string, input: Record<string, unknown>, opts: ToolPermissionContext & { signal: AbortSignal }): Promise<PermissionResult> {
    const refusal: PermissionResult = { behavior: "deny", message: DENY_MESSAGE, interrupt: true };
    if (this.stopping.signal.aborted || opts.signal?.aborted) return refusal;
    const wait = new AbortController();
    const onProviderCancel = () => {
      // Claude Code withdrew the request (e.g. after an interrupt): stale, not answered.
      this.ctx.abandonInteraction();
      wait.abort();
    };
    opts.signal?.addEventListener("abort", onProviderCancel, { once: true });
    this.humanWaits.add(wait);
    this.idle.clear();
    try {
      return await askHuman(this.ctx, tool, input, opts, wait.signal);
    } catch (err) {
      // Expiry or staleness ends the turn with that error, unless this is a cancel (already terminal).
      if (!this.stopping.signal.aborted && !wait.signal.aborted) {
        this.idleFailure = toServerfsError(err, "AGENT_PROVIDER_ERROR");
        void this.interruptThenAbort();
      }
      return refusal;
    } finally {
      opts.signal?.removeEventListener("abort", onProviderCancel);
      this.humanWaits.delete(wait);
      this.touchIdle();
    }
  }

  private emit(type: ProviderEventType, payload: Record<string, unknown>): void {
    try {
      this.ctx.emitEvent(type, payload);
    } catch (err) {
      this.idleFailure = toServerfsError(err, "AGENT_EVENT_TOO_LARGE");
      void this.interruptThenAbort();
    }
  }

  private touchIdle(): void {
    if (this.humanWaits.size > 0 || this.stopping.signal.aborted) return;
    this.idle.restart();
  }

  /** The CLI's containment set is stopped and the stop proved, whatever the SDK did. */
  private async teardown(): Promise<void> {
    this.idle.clear();
    this.endInput();
    const spawned = this.spawned;
    if (spawned === null) return;
    let proc: ContainedProcess;
    try {
      proc = await spawned.started;
    } catch {
      return;
    }
    if (!this.cancelRequested) await Promise.race([proc.exited, new Promise((r) => setTimeout(r, 2000))]);
    this.sdkAbort.abort();
    await stopWithProof(proc, "claude code", (kind, detail) => this.diagnostics.record(kind, detail));
  }
}

async function drain(iterator: AsyncIterator<unknown>): Promise<void> {
  try {
    for (;;) if ((await iterator.next()).done) return;
  } catch {
    // the SDK throws when the input ends after a result; the turn already has its answer
  }
}
