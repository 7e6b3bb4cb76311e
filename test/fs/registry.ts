// Registry objects built directly (the same shape the config loader produces), for the fs tests,
// their child-process fixtures and the fs benchmarks. No bun:test import: children run it too.
import type { FsLimits, Registry, Workdir } from "../../src/config/types.ts";

export function workdir(alias: string, root: string, over: Partial<Workdir> = {}): Workdir {
  return {
    alias, path: root, description: null, read_only: false, agent_mode: "disabled", agent_runtimes: [],
    allow_hidden: false, disable_default_deny: false, extra_deny_globs: [], max_read_bytes: 524_288, max_read_lines: 500,
    max_write_bytes: 1_048_576, binary_transfer_enabled: false, max_binary_transfer_bytes: 8_388_608,
    cross_mounts: true, refuse_hardlinked_reads: false, ...over,
  };
}

export function registry(workdirs: Workdir[], limits: Partial<FsLimits> = {}): Registry {
  return {
    server: { log_level: "INFO", state_dir: null },
    limits: {
      default_list_limit: 100, max_list_entries: 500, default_search_results: 50, max_search_results: 100,
      max_walk_entries: 200_000, search_timeout_seconds: 15, search_max_file_bytes: 52_428_800, max_edits_per_call: 50, ...limits,
    },
    workdirs,
    agent: {
      enabled: false, enable_fake_runtime: false, bridge_timeout_seconds: 30, task_timeout_seconds: 7200,
      interaction_timeout_seconds: 1800, max_active_tasks: 4, retention_seconds: 604800, result_spool_threshold_bytes: 262144, approvals: "auto",
      event_idle_timeout_seconds: null, provider_env_file: null,
      codex: { enabled: false, bin: "codex", use_proxy: true }, claude: { enabled: false, bin: "claude", use_proxy: false },
      qoder: { enabled: false, bin: "qodercli", use_proxy: false },
      proxy: { enabled: false, url: null, no_proxy: ["127.0.0.1", "localhost", "::1"] }, acp_profiles: [],
    },
  };
}
