// Reading a stored capability snapshot back. The store hands back whatever JSON it kept; a row
// from an older or foreign writer must not be trusted into a capability claim, so anything that
// does not have exactly the expected shape counts as "unmeasured".
import type { CapabilitySnapshot, ModelChoice } from "./capabilities.ts";

const isStr = (v: unknown): v is string => typeof v === "string";
const isStrOrNull = (v: unknown): v is string | null => v === null || typeof v === "string";

function parseModel(v: unknown): ModelChoice | null {
  if (!v || typeof v !== "object") return null;
  const m = v as Record<string, unknown>;
  if (!isStr(m.id) || !isStr(m.display_name) || !isStrOrNull(m.description) || typeof m.is_default !== "boolean") return null;
  return { id: m.id, display_name: m.display_name, description: m.description, is_default: m.is_default };
}

export function parseSnapshot(value: unknown): CapabilitySnapshot | null {
  const raw = typeof value === "string" ? safeJson(value) : value;
  if (!raw || typeof raw !== "object") return null;
  const s = raw as Record<string, unknown>;
  if (typeof s.protocol_version !== "number" || !isStrOrNull(s.agent_name) || !isStrOrNull(s.agent_version)) return null;
  if (typeof s.load_session !== "boolean" || typeof s.resume_session !== "boolean") return null;
  if (!isStrOrNull(s.model_config_id) || !Array.isArray(s.models) || !isStr(s.measured_at)) return null;
  const models: ModelChoice[] = [];
  for (const m of s.models) {
    const parsed = parseModel(m);
    if (parsed === null) return null;
    models.push(parsed);
  }
  return {
    protocol_version: s.protocol_version,
    agent_name: s.agent_name,
    agent_version: s.agent_version,
    load_session: s.load_session,
    resume_session: s.resume_session,
    model_config_id: s.model_config_id,
    models,
    measured_at: s.measured_at,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
