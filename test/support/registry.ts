// Registry objects built directly, in the shape the config loader produces, from the loader's own
// default tables. No bun:test import: child-process fixtures and benchmarks use it too.
import { DEFAULT_AGENT, DEFAULT_LIMITS, DEFAULT_NATIVE_RUNTIMES, DEFAULT_POLICY, MANDATORY_NO_PROXY } from "../../src/config/defaults.ts";
import type { AgentConfig, FsLimits, Registry, Workdir } from "../../src/config/types.ts";

/** The [agent] table with every default: the Agent off, every runtime off, no proxy. */
export function agentConfig(over: Partial<AgentConfig> = {}): AgentConfig {
  return {
    ...DEFAULT_AGENT,
    event_idle_timeout_seconds: null,
    provider_env_file: null,
    codex: { ...DEFAULT_NATIVE_RUNTIMES.codex },
    claude: { ...DEFAULT_NATIVE_RUNTIMES.claude },
    qoder: { ...DEFAULT_NATIVE_RUNTIMES.qoder },
    proxy: { enabled: false, url: null, no_proxy: [...MANDATORY_NO_PROXY] },
    acp_profiles: [],
    advice_rules: [],
    ...over,
  };
}

/** A read-write workdir with the default policy and no agent access. */
export function workdir(alias: string, root: string, over: Partial<Workdir> = {}): Workdir {
  return {
    ...DEFAULT_POLICY,
    extra_deny_globs: [],
    alias,
    path: root,
    description: null,
    read_only: false,
    agent_mode: "disabled",
    agent_runtimes: [],
    ...over,
  };
}

export interface RegistryOptions {
  stateDir?: string | null;
  agent?: Partial<AgentConfig>;
}

export function registry(workdirs: Workdir[], limits: Partial<FsLimits> = {}, opts: RegistryOptions = {}): Registry {
  return {
    server: { log_level: "INFO", state_dir: opts.stateDir ?? null },
    limits: { ...DEFAULT_LIMITS, ...limits },
    workdirs,
    agent: agentConfig(opts.agent),
  };
}

/** A workdir the fake runtime may write in (the Bridge suites' default). */
export function agentWorkdir(alias: string, root: string, over: Partial<Workdir> = {}): Workdir {
  return workdir(alias, root, { agent_mode: "workspace-write", agent_runtimes: ["fake"], ...over });
}

/** A Registry with the Agent and the fake runtime on, its state in `stateDir`. */
export function bridgeRegistry(stateDir: string, workdirs: Workdir[], agent: Partial<AgentConfig> = {}): Registry {
  return registry(workdirs, {}, { stateDir, agent: { enabled: true, enable_fake_runtime: true, ...agent } });
}
