// What an ACP profile can do, as measured by a real handshake — never inferred from the agent's
// name or reputation (docs/acp-profiles.md, "What to expect"). A snapshot is taken from `initialize` plus the first session
// response of a task that needed them anyway, stored keyed by the profile's fingerprint, and
// ignored as soon as the profile's launch configuration changes (the fingerprint changes with it).
import type * as acp from "@agentclientprotocol/sdk";
import { boundedText } from "./mapping.ts";

export interface ModelChoice {
  id: string;
  display_name: string;
  description: string | null;
  is_default: boolean;
}

export interface CapabilitySnapshot {
  protocol_version: number;
  agent_name: string | null;
  agent_version: string | null;
  load_session: boolean;
  resume_session: boolean;
  /** The `category: "model"` select option, if the agent offers exactly one. */
  model_config_id: string | null;
  models: ModelChoice[];
  measured_at: string;
}

/** Where snapshots live (the Bridge store's `runtime_capabilities` table). */
export interface CapabilityStore {
  get(runtime: string, fingerprint: string): CapabilitySnapshot | null;
  put(runtime: string, fingerprint: string, snapshot: CapabilitySnapshot): void;
}

const MAX_MODELS = 64;

/** Flatten a select option's values (plain list or groups). */
function selectValues(options: unknown): Array<{ value: string; name: string; description: string | null }> {
  const out: Array<{ value: string; name: string; description: string | null }> = [];
  if (!Array.isArray(options)) return out;
  for (const item of options) {
    if (!item || typeof item !== "object") continue;
    const o = item as { value?: unknown; name?: unknown; description?: unknown; options?: unknown };
    if (Array.isArray(o.options)) {
      out.push(...selectValues(o.options));
    } else if (typeof o.value === "string" && o.value.length > 0 && o.value.length <= 256) {
      out.push({ value: o.value, name: boundedText(o.name, 256) ?? o.value, description: boundedText(o.description, 2048) });
    }
  }
  return out;
}

/** The single model selector among `configOptions`, if there is exactly one. */
export function findModelOption(
  configOptions: unknown,
): { id: string; currentValue: string | null; values: Array<{ value: string; name: string; description: string | null }> } | null {
  if (!Array.isArray(configOptions)) return null;
  const candidates = configOptions.filter(
    (o): o is Record<string, unknown> =>
      !!o && typeof o === "object" && (o as { category?: unknown }).category === "model" && (o as { type?: unknown }).type === "select",
  );
  if (candidates.length !== 1) return null;
  const opt = candidates[0]!;
  if (typeof opt.id !== "string" || opt.id.length === 0) return null;
  return {
    id: opt.id,
    currentValue: typeof opt.currentValue === "string" ? opt.currentValue : null,
    values: selectValues(opt.options).slice(0, MAX_MODELS),
  };
}

export function snapshotFrom(init: acp.InitializeResponse, sessionResponse: { configOptions?: unknown } | null, now = new Date()): CapabilitySnapshot {
  const caps = (init.agentCapabilities ?? {}) as { loadSession?: unknown; sessionCapabilities?: unknown };
  const sessionCaps = (caps.sessionCapabilities && typeof caps.sessionCapabilities === "object" ? caps.sessionCapabilities : {}) as {
    resume?: unknown;
  };
  const info = (init.agentInfo ?? null) as { name?: unknown; version?: unknown } | null;
  const model = findModelOption(sessionResponse?.configOptions);
  return {
    protocol_version: init.protocolVersion,
    agent_name: boundedText(info?.name, 128),
    agent_version: boundedText(info?.version, 128),
    load_session: caps.loadSession === true,
    resume_session: sessionCaps.resume !== undefined && sessionCaps.resume !== null && typeof sessionCaps.resume === "object",
    model_config_id: model?.id ?? null,
    models: (model?.values ?? []).map((v) => ({
      id: v.value,
      display_name: v.name,
      description: v.description,
      is_default: v.value === model?.currentValue,
    })),
    measured_at: now.toISOString(),
  };
}

/** The shape `runtime.list` reports for an ACP profile (docs/design/bridge-rpc.md, `runtime.list`). */
export interface AcpRuntimeInfo {
  name: string;
  available: boolean;
  version: string | null;
  persistent_session: boolean;
  live_steer: false;
  interactive_approval: boolean;
  interactive_question: boolean;
  in_flight_recovery: "session-resume";
  model_override: boolean;
  model_discovery: "runtime_catalog" | "unsupported";
  capability_state: "unmeasured" | "measured";
  protocol_version: number | null;
}

export function runtimeInfo(name: string, available: boolean, snapshot: CapabilitySnapshot | null): AcpRuntimeInfo {
  const models = snapshot !== null && snapshot.model_config_id !== null && snapshot.models.length > 0;
  return {
    name,
    available,
    version: snapshot?.agent_version ?? null,
    persistent_session: snapshot !== null && (snapshot.load_session || snapshot.resume_session),
    live_steer: false,
    // Every ACP agent may ask; the client always brokers, so this needs no measurement.
    interactive_approval: true,
    // Every ACP agent may send a form (serverfs advertises form elicitation to all of them).
    interactive_question: true,
    in_flight_recovery: "session-resume",
    model_override: models,
    model_discovery: models ? "runtime_catalog" : "unsupported",
    capability_state: snapshot === null ? "unmeasured" : "measured",
    protocol_version: snapshot?.protocol_version ?? null,
  };
}
