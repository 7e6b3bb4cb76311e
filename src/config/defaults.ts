// Default values and fixed bounds of the registry (docs/configuration.md). One table, read by the normalizer, the starter config and the docs tests.
import { NATIVE_DESCRIPTORS, NATIVE_RUNTIMES, type NativeRuntimeName } from "./runtime-catalog.ts";
import type { FsLimits, NativeRuntimeConfig, WorkdirPolicy } from "./types.ts";

export const DEFAULT_LIMITS: Readonly<FsLimits> = {
  default_list_limit: 100,
  max_list_entries: 500,
  default_search_results: 50,
  max_search_results: 100,
  max_walk_entries: 200_000,
  search_timeout_seconds: 15,
  search_max_file_bytes: 52_428_800,
  max_edits_per_call: 50,
  max_files_per_read: 32,
  max_media_bytes: 5_242_880,
  file_lock_wait_ms: 5_000,
};

/** Global defaults of the per-workdir policy (extra_deny_globs is the global list, empty by default). */
export const DEFAULT_POLICY: Readonly<WorkdirPolicy> = {
  allow_hidden: false,
  disable_default_deny: false,
  extra_deny_globs: [],
  max_read_bytes: 524_288,
  max_read_lines: 500,
  max_write_bytes: 1_048_576,
  binary_transfer_enabled: false,
  max_binary_transfer_bytes: 8_388_608,
  cross_mounts: true,
  refuse_hardlinked_reads: false,
  respect_ignore_files: true,
};

export const DEFAULT_AGENT = {
  enabled: false,
  enable_fake_runtime: false,
  bridge_timeout_seconds: 30,
  task_timeout_seconds: 7200,
  interaction_timeout_seconds: 1800,
  max_active_tasks: 4,
  retention_seconds: 604_800,
  result_spool_threshold_bytes: 262_144,
  approvals: "auto",
  /**
   * A turn with no provider traffic for this long ends with AGENT_IDLE_TIMEOUT; 0 = never. Agents
   * stream while they work (thought and message chunks, tool-call updates), but a single tool call
   * (a build, a test suite) is reported only when it starts and ends, so half an hour of silence
   * outlasts real quiet work, and still ends an agent retrying an unreachable model hours before
   * task_timeout_seconds (get_agent_task's last_event_at shows the silence from the first minute).
   * Time waiting on a human never counts.
   */
  event_idle_timeout_seconds: 1800,
} as const;

export const MAX_RESULT_SPOOL_THRESHOLD_BYTES = 8_388_608;

/** Every native runtime starts disabled, with its catalog executable and proxy default. */
export const DEFAULT_NATIVE_RUNTIMES = Object.fromEntries(
  NATIVE_RUNTIMES.map((n) => [n, { enabled: false, bin: NATIVE_DESCRIPTORS[n].executable, use_proxy: NATIVE_DESCRIPTORS[n].defaultUseProxy }]),
) as { readonly [N in NativeRuntimeName]: Readonly<NativeRuntimeConfig> };

/** Always part of NO_PROXY, whatever the operator lists: the Bridge and local tools stay direct. */
export const MANDATORY_NO_PROXY = ["127.0.0.1", "localhost", "::1"] as const;

export const ACP_DEFAULTS = {
  use_proxy: false,
  probe_timeout_seconds: 30,
  shutdown_timeout_seconds: 5,
} as const;

export const BOUNDS = {
  maxTomlWorkdirs: 64,
  envSlots: 16,
  maxAcpProfiles: 16,
  maxAcpArgs: 32,
  maxAcpTmpdirEnv: 8,
  /** UTF-8 bytes per argv element. */
  maxAcpArgBytes: 4096,
  /** UTF-8 bytes of one profile's canonical JSON (id, command, args, flags). */
  maxAcpProfileBytes: 32_768,
  /** UTF-8 bytes of all profiles' canonical JSON together. */
  maxAcpProfilesTotalBytes: 131_072,
  maxAcpProbeTimeoutSeconds: 600,
  maxAcpShutdownTimeoutSeconds: 120,
  maxDescriptionChars: 1024,
  maxDenyGlobs: 128,
  maxAdviceRules: 64,
  maxAdvicePaths: 32,
  maxAdviceTextChars: 512,
  maxDenyGlobChars: 512,
  maxNoProxyEntries: 64,
  maxNoProxyEntryChars: 255,
  maxBinChars: 4096,
  /** A config file larger than this is refused before parsing. */
  maxConfigFileBytes: 1_048_576,
} as const;

/** The alias grammar: the schema checks it, and the MCP Bundle's folder workdirs are named by it (folder-workdirs.ts). */
export const ALIAS_PATTERN = "^[A-Za-z][A-Za-z0-9_-]{0,31}$";

export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const;
