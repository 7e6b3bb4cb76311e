// The identity of the configuration a Bridge runs, in two parts, both hashes of the registry:
// - `config_identity`: what decides where and what an agent may run: the workdirs open to agents
//   (alias, path, mode, agent mode and runtimes) and, from [agent], whether it is on, the runtimes
//   and ACP profiles that can be launched, the provider env file and the proxy. The Bridge checks
//   it on every submit and refuses one from another configuration with AGENT_BRIDGE_CONFIG_STALE,
//   so no task runs under workdirs the caller's file no longer names.
// - `settings_identity`: the rest of [agent] the Bridge applies (timeouts, caps, retention, the
//   result spool, the advice rules). A difference there runs nothing anywhere new; doctor warns that the edit waits
//   for a restart.
// What only serve uses (read-only workdirs without agents, file-tool limits and policy, the log
// level, who answers approvals) is in neither, so an edit of it never asks for a restart that
// would change nothing (docs/agent-bridge.md, "One configuration").
import { createHash } from "node:crypto";
import { canonicalJson } from "../common/canonical-json.ts";
import type { Registry } from "./types.ts";

function hash(value: unknown): string {
  return `sha256:${createHash("sha256").update(canonicalJson(value), "utf8").digest("hex")}`;
}

export function bridgeConfigIdentity(registry: Registry): string {
  const workdirs = registry.workdirs
    .filter((w) => w.agent_mode !== "disabled")
    .map((w) => ({ alias: w.alias, path: w.path, read_only: w.read_only, agent_mode: w.agent_mode, agent_runtimes: w.agent_runtimes }))
    .sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
  const a = registry.agent;
  const runs = {
    enabled: a.enabled,
    enable_fake_runtime: a.enable_fake_runtime,
    codex: a.codex,
    claude: a.claude,
    qoder: a.qoder,
    proxy: a.proxy,
    provider_env_file: a.provider_env_file,
    acp_profiles: a.acp_profiles.map((p) => ({ id: p.id, fingerprint: p.fingerprint })),
  };
  return hash({ workdirs, agent: runs });
}

export function bridgeSettingsIdentity(registry: Registry): string {
  const a = registry.agent;
  return hash({
    bridge_timeout_seconds: a.bridge_timeout_seconds,
    task_timeout_seconds: a.task_timeout_seconds,
    interaction_timeout_seconds: a.interaction_timeout_seconds,
    max_active_tasks: a.max_active_tasks,
    retention_seconds: a.retention_seconds,
    result_spool_threshold_bytes: a.result_spool_threshold_bytes,
    event_idle_timeout_seconds: a.event_idle_timeout_seconds,
    acp_timeouts: a.acp_profiles.map((p) => ({ id: p.id, probe: p.probe_timeout_seconds, shutdown: p.shutdown_timeout_seconds })),
    advice_rules: a.advice_rules,
  });
}
