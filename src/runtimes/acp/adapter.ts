// The one generic ACP runtime: an `acp-<id>` adapter bound to one operator-configured profile.
// Nothing here (or anywhere under runtimes/acp) branches on which agent a profile launches;
// behaviour depends only on what the agent advertises in the handshake.
import * as fs from "node:fs";
import type { AcpProfile, AgentConfig } from "../../config/types.ts";
import { ServerfsError } from "../../errors.ts";
import { TurnAdapter } from "../kernel/turn-adapter.ts";
import type { Diagnostics } from "../kernel/turn-support.ts";
import type { RuntimeServices, TaskContext } from "../types.ts";
import { runtimeInfo, type CapabilitySnapshot } from "./capabilities.ts";
import { parseSnapshot } from "./snapshot.ts";
import { AcpTurn } from "./turn.ts";
import { IS_WINDOWS } from "../../../platform/os.ts";
import type { RuntimeInfo } from "../../config/runtime-info.ts";

export interface AcpAdapterOptions {
  profile: AcpProfile;
  agent: Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds">;
  /** Per-task temp directories are created under here (the deployment's `<state>/tmp`). */
  tmpRoot: string;
  services: RuntimeServices;
  diagnostics: Diagnostics;
  /** Literal values (provider env file credentials) never to appear in diagnostics. */
  secrets?: readonly string[];
}

/** Executable check only: an ACP agent is never started to answer "is it there?". */
export function executableAvailable(command: string): boolean {
  try {
    const st = fs.statSync(command);
    if (!st.isFile()) return false;
    if (!IS_WINDOWS) fs.accessSync(command, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export class AcpAdapter extends TurnAdapter<AcpTurn> {
  protected override readonly sessionNoun = "ACP session";
  protected override readonly reattachDetail = "an ACP child cannot be reattached after a restart";

  constructor(private readonly opts: AcpAdapterOptions) {
    super();
  }

  override get name(): string {
    return this.opts.profile.runtime;
  }

  /** The measured snapshot for the profile as configured now, or null (unmeasured). */
  snapshot(): CapabilitySnapshot | null {
    const stored = this.opts.services.loadCapabilities(this.opts.profile.fingerprint);
    return stored === null ? null : parseSnapshot(stored.snapshot);
  }

  override async probe(): Promise<RuntimeInfo> {
    return { ...runtimeInfo(this.name, executableAvailable(this.opts.profile.command), this.snapshot()) };
  }

  async listModels(): Promise<Record<string, unknown>> {
    const base = { runtime: this.name, source: "acp_session_config" };
    const snap = this.snapshot();
    if (snap === null) {
      return { ...base, status: "unavailable", scope: "none", models: [], detail: "not measured yet: the model list appears after the first task on this runtime" };
    }
    if (snap.model_config_id === null || snap.models.length === 0) {
      return { ...base, status: "unsupported", scope: "none", models: [], detail: "this agent offers no model selector" };
    }
    return {
      ...base,
      status: "ok",
      scope: "session",
      measured_at: snap.measured_at,
      models: snap.models.map((m) => ({
        id: m.id,
        display_name: m.display_name,
        enabled: null,
        hidden: false,
        is_default: m.is_default,
        ...(m.description !== null ? { description: m.description } : {}),
      })),
    };
  }

  protected override newTurn(ctx: TaskContext): AcpTurn {
    return new AcpTurn(ctx, this.opts);
  }

  async sendMessage(): Promise<void> {
    throw new ServerfsError("AGENT_PROVIDER_ERROR", `runtime ${this.name} does not take messages while a task runs (live_steer=false)`);
  }
}
