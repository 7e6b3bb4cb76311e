// What `list_agent_runtimes` reports for one runtime: the runtime catalog's capability facts plus
// what a probe found (availability, version). Config owns it because the catalog, which config
// validation reads, is typed by it.
export interface RuntimeInfo {
  name: string;
  available: boolean;
  version: string | null;
  persistent_session: boolean;
  live_steer: boolean;
  interactive_approval: boolean;
  interactive_question: boolean;
  in_flight_recovery: "none" | "session-resume";
  model_override: boolean;
  model_discovery: "runtime_catalog" | "current_account" | "unsupported";
  /** Additive (ACP): "unmeasured" until a real handshake has been recorded. */
  capability_state?: "unmeasured" | "measured";
  [extra: string]: unknown;
}
