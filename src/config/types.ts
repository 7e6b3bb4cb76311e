// The one normalized configuration registry. Every layer (serve, bridge, render-config, doctor,
// tasks, service) reads the deployment through `loadRegistry` and sees exactly this shape, so a
// setting cannot be accepted by one layer and refused by another.
//
// Field names are snake_case on purpose: the registry is also the body of the rendered private
// Bridge document, and operators see the same names in serverfs.toml.

export type LogLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR";
export type AgentMode = "disabled" | "review" | "workspace-write";
export type TaskProfile = "review" | "workspace-write";
/** Runtime names no ACP profile may take (`fake` is the test runtime): from the runtime catalog. */
export { RESERVED_RUNTIME_NAMES, type NativeRuntimeName } from "./runtime-catalog.ts";

/** Global-only filesystem limits (docs/configuration.md). */
export interface FsLimits {
  default_list_limit: number;
  max_list_entries: number;
  default_search_results: number;
  max_search_results: number;
  max_walk_entries: number;
  search_timeout_seconds: number;
  search_max_file_bytes: number;
  max_edits_per_call: number;
  /** Paths in one read_multiple_files call. */
  max_files_per_read: number;
  /** Largest file read_media_file returns. */
  max_media_bytes: number;
  /** How long a guarded mutation waits for the directory lock another serverfs writer holds (FILE_BUSY after). */
  file_lock_wait_ms: number;
}

/** Settings that have a global default and may be overridden per workdir. */
export interface WorkdirPolicy {
  allow_hidden: boolean;
  disable_default_deny: boolean;
  /** Effective list: global globs, then the workdir's own, order-preserving dedupe. Never narrower than global. */
  extra_deny_globs: string[];
  max_read_bytes: number;
  max_read_lines: number;
  max_write_bytes: number;
  binary_transfer_enabled: boolean;
  max_binary_transfer_bytes: number;
  /** false: a mount point inside the workdir is a wall (docs/security.md, "Mount points"). */
  cross_mounts: boolean;
  /** true: content reads of a regular file with more than one hard link are refused. */
  refuse_hardlinked_reads: boolean;
  /** find_files, search_text and directory_tree leave out what .gitignore/.ignore files ignore (docs/tools.md). */
  respect_ignore_files: boolean;
}

export interface Workdir extends WorkdirPolicy {
  /** `^[A-Za-z][A-Za-z0-9_-]{0,31}$`, unique (case-sensitive). */
  alias: string;
  /** Absolute host path of the root, verbatim as configured (never shown to an MCP caller). */
  path: string;
  description: string | null;
  read_only: boolean;
  agent_mode: AgentMode;
  /** Runtime ids allowed on this workdir: native names, `fake`, or `acp-<id>`. */
  agent_runtimes: string[];
}

export interface NativeRuntimeConfig {
  enabled: boolean;
  /** Executable: absolute path, or a bare command name looked up on PATH at run time. */
  bin: string;
  use_proxy: boolean;
}

export interface AcpProfile {
  /** `^[a-z][a-z0-9_-]{0,27}$` */
  id: string;
  /** Derived, never configured: `acp-<id>` (≤ 32 chars). */
  runtime: string;
  /** Absolute path of a regular executable. */
  command: string;
  /** ≤ 32 items, passed as argv, never through a shell. */
  args: string[];
  use_proxy: boolean;
  /**
   * Extra variables that get the per-task temp directory besides TMPDIR, for agents that read
   * their own (docs/acp-profiles.md). Absent means none.
   */
  tmpdir_env?: readonly string[];
  probe_timeout_seconds: number;
  shutdown_timeout_seconds: number;
  /** `sha256:<hex>` over the launch-relevant fields; keys capability snapshots. */
  fingerprint: string;
}

export interface ProxyConfig {
  enabled: boolean;
  /** Credentialless `http://host:port`; null when disabled. */
  url: string | null;
  /** Always contains the loopback bypass (`127.0.0.1`, `localhost`, `::1`). */
  no_proxy: string[];
}

/**
 * Who answers a pending agent approval or question (docs/configuration.md): `auto` = the human
 * through MCP elicitation when the client supports it, else the assistant through the tools;
 * `elicitation` = only the human through elicitation; `tools` = the assistant through the tools;
 * `terminal` = only the operator through `serverfs tasks approve`.
 */
export type ApprovalsPath = "auto" | "elicitation" | "tools" | "terminal";

export interface AgentConfig {
  enabled: boolean;
  enable_fake_runtime: boolean;
  bridge_timeout_seconds: number;
  task_timeout_seconds: number;
  interaction_timeout_seconds: number;
  max_active_tasks: number;
  retention_seconds: number;
  result_spool_threshold_bytes: number;
  approvals: ApprovalsPath;
  /** Ends a silent provider turn (AGENT_IDLE_TIMEOUT); null = no idle timeout (configured as 0). */
  event_idle_timeout_seconds: number | null;
  /** Private `KEY=VALUE` file applied to provider children; its contents never enter the registry. */
  provider_env_file: string | null;
  codex: NativeRuntimeConfig;
  claude: NativeRuntimeConfig;
  qoder: NativeRuntimeConfig;
  proxy: ProxyConfig;
  acp_profiles: AcpProfile[];
  /** Operator rules for approval advice, in order (src/config/advice-rules.ts, docs/configuration.md). */
  advice_rules: AdviceRule[];
}

/** What an advice rule recommends: an ACP option kind, or no recommendation at all. */
export type AdviceChoice = "allow_once" | "allow_always" | "reject_once" | "reject_always" | "none";
/** The request kinds a rule can name: an approval's category, or a question. */
export type AdviceKind = "command" | "file_change" | "provider_permission" | "network_permission" | "mcp_tool" | "other" | "question";

/** One `[[agent.advice_rules]]` entry; an absent matcher is null (matches anything). */
export interface AdviceRule {
  /** The rule's name as the advice reports it: configured, or `agent.advice_rules[N]`. */
  name: string;
  kind: AdviceKind | null;
  command_prefix: string | null;
  /** RE2 syntax, checked when the configuration is loaded. */
  command_regex: string | null;
  /** Path globs relative to the workdir (ripgrep glob syntax). */
  paths: string[] | null;
  runtime: string | null;
  advise: AdviceChoice;
  reason: string | null;
}

export interface ServerConfig {
  log_level: LogLevel;
  /** Absolute state directory; null = the per-user default (see paths.ts). */
  state_dir: string | null;
}

export interface Registry {
  server: ServerConfig;
  limits: FsLimits;
  workdirs: Workdir[];
  agent: AgentConfig;
}

/** Where a registry came from: used only to name the file in error messages. */
export interface RegistrySource {
  format: "toml" | "env" | "cli";
  file: string | null;
}
