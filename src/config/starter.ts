// The commented starter serverfs.toml written by `serverfs init`. It is a valid config as
// written (one read-only workdir: the directory init ran in); everything else is shown
// commented out with its default, so uncommenting a line never changes meaning by surprise.
import { ACP_DEFAULTS, DEFAULT_AGENT, DEFAULT_LIMITS, DEFAULT_POLICY } from "./defaults.ts";

/** A TOML basic string; JSON's escapes are a subset of TOML's. */
function tomlString(text: string): string {
  return JSON.stringify(text);
}

export function starterToml(workdirPath: string): string {
  const L = DEFAULT_LIMITS;
  const P = DEFAULT_POLICY;
  const A = DEFAULT_AGENT;
  return `# serverfs configuration. Reference: docs/configuration.md
# Unknown keys and wrong types are errors; paths must be absolute; booleans are true/false.
# Validate with: serverfs render-config --config serverfs.toml

[server]
log_level = "INFO"                  # DEBUG | INFO | WARNING | ERROR
# state_dir = "/absolute/path"      # default: the per-user state directory

# Global-only filesystem limits.
[limits]
# default_list_limit = ${L.default_list_limit}
# max_list_entries = ${L.max_list_entries}
# default_search_results = ${L.default_search_results}
# max_search_results = ${L.max_search_results}
# max_walk_entries = ${L.max_walk_entries}
# search_timeout_seconds = ${L.search_timeout_seconds}
# search_max_file_bytes = ${L.search_max_file_bytes}
# max_edits_per_call = ${L.max_edits_per_call}
# max_files_per_read = ${L.max_files_per_read}
# max_media_bytes = ${L.max_media_bytes}
# file_lock_wait_ms = ${L.file_lock_wait_ms}

# Defaults for every workdir; each may be overridden inside a [[workdirs]] entry.
[defaults]
# allow_hidden = ${P.allow_hidden}
# disable_default_deny = ${P.disable_default_deny}
# extra_deny_globs = []             # a workdir's own list is added to this one, never replaces it
# max_read_bytes = ${P.max_read_bytes}
# max_read_lines = ${P.max_read_lines}
# max_write_bytes = ${P.max_write_bytes}
# binary_transfer_enabled = ${P.binary_transfer_enabled}
# max_binary_transfer_bytes = ${P.max_binary_transfer_bytes}
# cross_mounts = ${P.cross_mounts}                # false: a mount point inside a workdir is refused
# refuse_hardlinked_reads = ${P.refuse_hardlinked_reads}    # true: files with several hard links are not read
# respect_ignore_files = ${P.respect_ignore_files}     # false: find_files, search_text and directory_tree ignore .gitignore/.ignore

# One [[workdirs]] table per exposed directory (1 to 64).
[[workdirs]]
alias = "project"                   # a letter, then up to 31 letters, digits, _ or -
path = ${tomlString(workdirPath)}
description = "the directory serverfs init ran in"
read_only = true                    # set false to allow the write tools here
# agent_mode = "disabled"           # disabled | review | workspace-write
# agent_runtimes = []               # e.g. ["codex"] or ["acp-myagent"]

# The Agent Bridge (delegated coding tasks). Off unless enabled.
[agent]
enabled = false
# enable_fake_runtime = ${A.enable_fake_runtime}
# bridge_timeout_seconds = ${A.bridge_timeout_seconds}
# task_timeout_seconds = ${A.task_timeout_seconds}
# interaction_timeout_seconds = ${A.interaction_timeout_seconds}
# max_active_tasks = ${A.max_active_tasks}
# retention_seconds = ${A.retention_seconds}
# result_spool_threshold_bytes = ${A.result_spool_threshold_bytes}
# approvals = "${A.approvals}"                 # auto | elicitation | tools | terminal: who answers an agent's approval
# event_idle_timeout_seconds = ${A.event_idle_timeout_seconds}  # a turn silent this long ends AGENT_IDLE_TIMEOUT; 0 = never
# provider_env_file = "/absolute/path/provider.env"   # 0600, KEY=VALUE lines for provider children

# [agent.codex]
# enabled = false
# bin = "codex"                     # absolute path, or a command name looked up on PATH
# use_proxy = true

# [agent.claude]
# enabled = false
# bin = "claude"
# use_proxy = false

# [agent.qoder]
# enabled = false
# bin = "qodercli"
# use_proxy = false

# [agent.proxy]
# enabled = false
# url = "http://127.0.0.1:3128"     # credentialless http://host:port only
# no_proxy = []                     # 127.0.0.1, localhost and ::1 are always added

# [[agent.acp_profiles]]            # runtime id: acp-<id>; at most 16 profiles
# id = "myagent"
# command = "/absolute/path/to/agent"   # an existing executable file, run without a shell
# args = ["--acp"]
# use_proxy = ${ACP_DEFAULTS.use_proxy}
# tmpdir_env = []                   # e.g. ["CLAUDE_CODE_TMPDIR"] for claude-agent-acp
# probe_timeout_seconds = ${ACP_DEFAULTS.probe_timeout_seconds}
# shutdown_timeout_seconds = ${ACP_DEFAULTS.shutdown_timeout_seconds}
`;
}
