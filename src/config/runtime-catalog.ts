// The runtime catalog: one descriptor per runtime family, and the one place runtime names are
// listed. Config validation, the Bridge (src/bridge/adapters.ts builds one adapter family per
// entry, typed so that none can be missing), doctor and the adapters themselves read it, so a
// family is added or renamed here once. It is plain data with no adapter imports: config and
// `serverfs serve` read it without loading any provider SDK.
import type { RuntimeInfo } from "./runtime-info.ts";

/** What a runtime advertises in `list_agent_runtimes` besides name, availability and version. */
export type CapabilityFacts = Pick<
  RuntimeInfo,
  "persistent_session" | "live_steer" | "interactive_approval" | "interactive_question" | "in_flight_recovery" | "model_override" | "model_discovery" | "capability_state"
>;

export const NATIVE_RUNTIMES = ["codex", "claude", "qoder"] as const;
export type NativeRuntimeName = (typeof NATIVE_RUNTIMES)[number];
export type RuntimeFamilyName = "fake" | "acp" | NativeRuntimeName;

/** A native runtime: an operator-installed executable driven through its own protocol. */
export interface NativeRuntimeDescriptor {
  family: NativeRuntimeName;
  /** The runtime name tasks and `agent_runtimes` use; its config section is `[agent.<name>]`. */
  name: NativeRuntimeName;
  configSection: `agent.${NativeRuntimeName}`;
  /** `.env` keys are `<envPrefix>_ENABLED`, `_BIN`, `_USE_PROXY`. */
  envPrefix: string;
  /** The default `bin`, and the executable's name in messages. */
  executable: string;
  /** Where the executable comes from (for install hints). */
  package: string;
  defaultUseProxy: boolean;
  /** The first line of `<executable> --version`; group 1 is the version. */
  versionPattern: RegExp;
  /** In messages: "the source task has no <sessionNoun> to continue", "no running <turnNoun>". */
  sessionNoun: string;
  turnNoun: string;
  /** Why reconcile cannot reattach the child after a Bridge restart. */
  reattachDetail: string;
  capabilities: CapabilityFacts;
}

export interface RuntimeFamilyDescriptor {
  family: Exclude<RuntimeFamilyName, NativeRuntimeName>;
  /** A fixed runtime name, or (ACP) the prefix of `acp-<profile id>`. */
  name: string;
  namePattern: "fixed" | "prefix";
  configSection: string;
  /** Fixed facts, or null when they are probed per agent (ACP). */
  capabilities: CapabilityFacts | null;
}

export type RuntimeDescriptor = NativeRuntimeDescriptor | RuntimeFamilyDescriptor;

/** A resumable session with every approval and question brokered, no live steering, no model list. */
const BROKERED_TURN: CapabilityFacts = {
  persistent_session: true,
  live_steer: false,
  interactive_approval: true,
  interactive_question: true,
  in_flight_recovery: "session-resume",
  model_override: true,
  model_discovery: "unsupported",
};

export const NATIVE_DESCRIPTORS: { readonly [N in NativeRuntimeName]: NativeRuntimeDescriptor } = {
  // Exactly what the offline end-to-end suite proves (test/runtimes/codex): approvals, questions,
  // live steering, session resume, model override and catalog discovery.
  codex: {
    family: "codex",
    name: "codex",
    configSection: "agent.codex",
    envPrefix: "SERVERFS_CODEX",
    executable: "codex",
    package: "@openai/codex",
    defaultUseProxy: true,
    versionPattern: /^codex(?:-cli)?\s+(\S+)/,
    sessionNoun: "codex thread",
    turnNoun: "codex turn",
    reattachDetail: "a Bridge-owned codex app-server cannot be reattached after a restart",
    capabilities: {
      persistent_session: true,
      live_steer: true,
      interactive_approval: true,
      interactive_question: true,
      in_flight_recovery: "session-resume",
      model_override: true,
      model_discovery: "runtime_catalog",
    },
  },
  // What test/runtimes/claude proves.
  claude: {
    family: "claude",
    name: "claude",
    configSection: "agent.claude",
    envPrefix: "SERVERFS_CLAUDE",
    executable: "claude",
    package: "@anthropic-ai/claude-agent-sdk",
    defaultUseProxy: false,
    // `2.1.332 (Claude Code)` → `2.1.332`.
    versionPattern: /^(\d+\.\d+\.\d+\S*)\s*(\(Claude Code\))?$/,
    sessionNoun: "Claude session",
    turnNoun: "Claude turn",
    reattachDetail: "a Claude Code child cannot be reattached after a restart",
    capabilities: BROKERED_TURN,
  },
  // Proved against a recorded-protocol fixture plus the real CLI's version and not-logged-in
  // paths; "unmeasured" says so until a live acceptance run exists (docs/runtimes.md).
  qoder: {
    family: "qoder",
    name: "qoder",
    configSection: "agent.qoder",
    envPrefix: "SERVERFS_QODER",
    executable: "qodercli",
    package: "@qoder-ai/qodercli",
    defaultUseProxy: false,
    versionPattern: /^(?:qodercli\s+)?v?(\d+\.\d+\.\d+\S*)$/,
    sessionNoun: "Qoder session",
    turnNoun: "Qoder turn",
    reattachDetail: "a qodercli child cannot be reattached after a restart",
    capabilities: { ...BROKERED_TURN, capability_state: "unmeasured" },
  },
};

export const FAKE_DESCRIPTOR: RuntimeFamilyDescriptor = {
  family: "fake",
  name: "fake",
  namePattern: "fixed",
  configSection: "agent.enable_fake_runtime",
  capabilities: {
    persistent_session: true,
    live_steer: true,
    interactive_approval: true,
    interactive_question: true,
    in_flight_recovery: "none",
    model_override: false,
    model_discovery: "unsupported",
  },
};

export const ACP_DESCRIPTOR: RuntimeFamilyDescriptor = {
  family: "acp",
  name: "acp-",
  namePattern: "prefix",
  configSection: "agent.acp_profiles",
  capabilities: null,
};

/** Every family, in the order the Bridge builds them. */
export const RUNTIME_CATALOG: readonly RuntimeDescriptor[] = [FAKE_DESCRIPTOR, ACP_DESCRIPTOR, ...NATIVE_RUNTIMES.map((n) => NATIVE_DESCRIPTORS[n])];

/** Runtime names no ACP profile id may take. */
export const RESERVED_RUNTIME_NAMES = [...NATIVE_RUNTIMES, "fake"] as const;

/** The version in the first line of `<executable> --version`, or null when it is not one. */
export function parseNativeVersion(d: NativeRuntimeDescriptor, firstLine: string): string | null {
  const m = d.versionPattern.exec(firstLine);
  return m ? m[1]! : null;
}

export function isNativeRuntime(name: string): name is NativeRuntimeName {
  return (NATIVE_RUNTIMES as readonly string[]).includes(name);
}

/** The family a runtime name belongs to, or null when it names none. */
export function runtimeFamilyOf(runtime: string): RuntimeFamilyName | null {
  if (isNativeRuntime(runtime)) return runtime;
  if (runtime === FAKE_DESCRIPTOR.name) return "fake";
  if (runtime.startsWith(ACP_DESCRIPTOR.name)) return "acp";
  return null;
}
