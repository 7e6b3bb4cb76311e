// The native Codex runtime: one Bridge-owned `codex app-server` child per task (never a shared
// daemon, so the child and everything it starts live in the task's containment set and can be
// proved stopped). Capabilities are exactly those the offline end-to-end suite proves
// (test/runtimes/codex): approvals, questions, live steering, session resume, model override
// and catalog discovery.
import { ServerfsError } from "../../errors.ts";
import { NATIVE_DESCRIPTORS, parseNativeVersion } from "../../config/runtime-catalog.ts";
import { NativeTurnAdapter } from "../kernel/turn-adapter.ts";
import type { TaskContext } from "../types.ts";
import { discoverModels } from "./models.ts";
import { CodexTurn } from "./turn.ts";

export function parseCodexVersion(line: string): string | null {
  return parseNativeVersion(NATIVE_DESCRIPTORS.codex, line);
}

export class CodexAdapter extends NativeTurnAdapter<CodexTurn> {
  protected override readonly descriptor = NATIVE_DESCRIPTORS.codex;

  async listModels(): Promise<Record<string, unknown>> {
    const base = { runtime: this.name, source: "codex_app_server" };
    const exe = this.exe();
    if (exe === null) return { ...base, status: "unavailable", scope: "none", models: [], detail: "the codex executable was not found" };
    const models = await discoverModels({ exe, config: this.opts.config, agent: this.opts.agent, tmpRoot: this.opts.tmpRoot }, this.env());
    if (models.length === 0) throw new ServerfsError("AGENT_PROVIDER_ERROR", "codex returned an empty model catalog");
    return { ...base, status: "ok", scope: "runtime_catalog", models };
  }

  protected override createTurn(ctx: TaskContext, exe: string): CodexTurn {
    return new CodexTurn(ctx, { ...this.opts, exe });
  }

  /** Live steering (live_steer=true): the message goes to the running turn. */
  override async sendMessage(taskId: string, message: string): Promise<void> {
    await this.activeTurn(taskId).steer(message);
  }
}
