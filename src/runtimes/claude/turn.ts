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
import { childEnvExtras } from "../kernel/child-env.ts";
import { ProviderTurn } from "../kernel/provider-turn.ts";
import { cancelledError, type Diagnostics } from "../kernel/turn-support.ts";
import type { AdapterResult, TaskContext } from "../types.ts";
import { ContainedSpawn } from "./contained-spawn.ts";
import { DENY_MESSAGE, askHuman, type PermissionResult, type ToolPermissionContext } from "../kernel/tool-permissions.ts";

const INTERRUPT_BOUND_MS = 3_000;
const DRAIN_AFTER_RESULT_MS = 5_000;

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

export class ClaudeTurn extends ProviderTurn {
  private readonly sdkAbort = new AbortController();
  private query: Query | null = null;
  private spawned: ContainedSpawn | null = null;
  private endInput!: () => void;
  private readonly inputDone = new Promise<void>((r) => (this.endInput = r));
  /** What the turn was ended with (idle, an interaction's error, an event bound); the SDK's own error says less. */
  private ended: ServerfsError | null = null;
  private failWith!: (err: ServerfsError) => void;
  private readonly failed = new Promise<never>((_, reject) => (this.failWith = reject));
  private nextWait = 0;

  constructor(
    ctx: TaskContext,
    private readonly opts: ClaudeTurnOptions,
  ) {
    super(ctx, {
      runtime: "claude",
      provider: "claude code",
      failedText: "claude code failed",
      tmpPrefix: "claude",
      tmpRoot: opts.tmpRoot,
      idleSeconds: opts.agent.event_idle_timeout_seconds,
      diagnostics: opts.diagnostics,
    });
    this.failed.catch(() => {});
  }

  protected override async interrupt(): Promise<void> {
    const q = this.query;
    if (q !== null) {
      await Promise.race([q.interrupt().catch(() => {}), new Promise((r) => setTimeout(r, INTERRUPT_BOUND_MS))]);
    }
    this.endInput();
    this.sdkAbort.abort();
  }

  protected override fail(err: ServerfsError): void {
    this.ended = err;
    this.failWith(err);
    void this.interrupt();
  }

  protected override connectionFailure(): Promise<never> {
    return this.failed;
  }

  protected override failureFor(err: unknown): ServerfsError {
    return this.ended ?? super.failureFor(err);
  }

  /** The prompt stream ended, whatever the run's end. */
  protected override onCleanup(): void {
    this.endInput();
  }

  protected override async launch(tmpDir: string): Promise<void> {
    const sdk: SdkModule = await import("@anthropic-ai/claude-agent-sdk");
    if (this.cancelRequested) throw cancelledError();
    // Claude Code ignores TMPDIR and reads CLAUDE_CODE_TMPDIR (docs/runtimes.md).
    const env = childEnvExtras({ proxy: this.opts.agent.proxy, useProxy: this.opts.config.use_proxy, tmpDir, tmpDirVariables: ["CLAUDE_CODE_TMPDIR"] });
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
  }

  protected override async converse(): Promise<AdapterResult> {
    let final: AdapterResult | null = null;
    this.touchIdle();
    const iterator = this.query![Symbol.asyncIterator]();
    for (;;) {
      const next = await this.abortable(iterator.next());
      if (next.done) break;
      this.touchIdle();
      const msg = next.value as Record<string, unknown>;
      if (msg.type === "system" && msg.subtype === "init") this.onSessionId(msg.session_id);
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

  /** The session id arrives with `init` (and again with the result); the turn starts with the first. */
  private onSessionId(raw: unknown): void {
    if (this.adoptSession(raw)) this.emit("turn.started", {});
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
    this.onSessionId(msg.session_id);
    if (msg.subtype !== "success" || msg.is_error === true) {
      if (this.cancelRequested) throw cancelledError();
      this.diagnostics.record("result_error", typeof msg.subtype === "string" ? msg.subtype : "error");
      throw new ServerfsError("AGENT_PROVIDER_ERROR", `claude code ended the turn with ${typeof msg.subtype === "string" ? msg.subtype.slice(0, 48) : "an error"}`);
    }
    const denials = Array.isArray(msg.permission_denials) ? msg.permission_denials.length : 0;
    if (denials > 0) this.emit("permission.denied", { count: denials });
    return this.finished(typeof msg.result === "string" ? msg.result : "");
  }

  private canUseTool(tool: string, input: Record<string, unknown>, opts: ToolPermissionContext & { signal: AbortSignal }): Promise<PermissionResult> {
    const key = String(this.nextWait++);
    return this.humanWaits.enqueue(key, (withdrawn) => this.broker(key, tool, input, opts, withdrawn));
  }

  private async broker(key: string, tool: string, input: Record<string, unknown>, opts: ToolPermissionContext & { signal: AbortSignal }, withdrawn: AbortSignal): Promise<PermissionResult> {
    const refusal: PermissionResult = { behavior: "deny", message: DENY_MESSAGE, interrupt: true };
    if (this.stopping.signal.aborted || withdrawn.aborted || opts.signal?.aborted) return refusal;
    // Claude Code withdrew the request (e.g. after an interrupt): stale, not answered.
    const onProviderCancel = () => this.humanWaits.withdraw(key, this.ctx);
    opts.signal?.addEventListener("abort", onProviderCancel, { once: true });
    try {
      return await this.withHuman(() => askHuman(this.ctx, tool, input, opts, withdrawn));
    } catch (err) {
      // Expiry or staleness ends the turn with that error, unless this is a cancel (already terminal).
      if (!this.stopping.signal.aborted && !withdrawn.aborted) this.fail(toServerfsError(err, "AGENT_PROVIDER_ERROR"));
      return refusal;
    } finally {
      opts.signal?.removeEventListener("abort", onProviderCancel);
    }
  }

  protected override async close(): Promise<void> {
    this.endInput();
  }

  /** The CLI's containment set, once the SDK has had it started. */
  protected override async child(): Promise<ContainedProcess | null> {
    if (this.spawned === null) return null;
    try {
      return await this.spawned.started;
    } catch {
      return null;
    }
  }

  /** The CLI's set is stopped and the stop proved by the kernel, whatever the SDK did. */
  protected override afterExitGrace(): void {
    this.sdkAbort.abort();
  }
}

async function drain(iterator: AsyncIterator<unknown>): Promise<void> {
  try {
    for (;;) if ((await iterator.next()).done) return;
  } catch {
    // the SDK throws when the input ends after a result; the turn already has its answer
  }
}
