// Raw document (already shape-checked by schema.ts) → the normalized Registry. This is where
// defaults are applied and every rule that relates several fields is enforced. All problems are
// collected, in document order, so one run tells the operator everything that is wrong.
import {
  ACP_DEFAULTS,
  BOUNDS,
  DEFAULT_AGENT,
  DEFAULT_LIMITS,
  DEFAULT_NATIVE_RUNTIMES,
  DEFAULT_POLICY,
  LOG_LEVELS,
  MANDATORY_NO_PROXY,
  MAX_RESULT_SPOOL_THRESHOLD_BYTES,
} from "./defaults.ts";
import { canonicalJson } from "../common/canonical-json.ts";
import { NATIVE_RUNTIMES, isNativeRuntime } from "./runtime-catalog.ts";
import { executableProblem } from "./executable.ts";
import { acpFingerprint } from "./fingerprint.ts";
import { normalizeAdviceRules } from "./advice-rules.ts";
import { hostPathProblem } from "./host-path.ts";
import type { KeyNamer, KeyPath, Problem } from "./problems.ts";
import { noProxyEntryProblem, normalizeProxyUrl } from "./proxy-url.ts";
import type { RawDocument } from "./schema.ts";
import {
  RESERVED_RUNTIME_NAMES,
  type AcpProfile,
  type AgentConfig,
  type AgentMode,
  type FsLimits,
  type LogLevel,
  type NativeRuntimeConfig,
  type NativeRuntimeName,
  type ProxyConfig,
  type Registry,
  type Workdir,
  type WorkdirPolicy,
} from "./types.ts";

const NATIVE = NATIVE_RUNTIMES;
const BARE_COMMAND = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,254}$/;

type RawWorkdir = RawDocument["workdirs"][number];
type RawAgent = NonNullable<RawDocument["agent"]>;
type RawPolicy = Partial<WorkdirPolicy>;

export function normalizeDocument(
  doc: RawDocument,
  namer: KeyNamer,
): { ok: true; registry: Registry } | { ok: false; problems: Problem[] } {
  const problems: Problem[] = [];
  const add = (path: KeyPath, reason: string) => problems.push({ path, reason });

  const logText = doc.server?.log_level ?? "INFO";
  const log_level = logText.toUpperCase() as LogLevel;
  if (!(LOG_LEVELS as readonly string[]).includes(log_level)) {
    add(["server", "log_level"], "expected DEBUG, INFO, WARNING or ERROR");
  }
  const stateDir = doc.server?.state_dir ?? null;
  if (stateDir !== null) pathCheck(stateDir, ["server", "state_dir"], add);

  const limits: FsLimits = { ...DEFAULT_LIMITS, ...doc.limits };
  if (limits.default_list_limit > limits.max_list_entries) {
    add(["limits", "default_list_limit"], `must not exceed ${namer(["limits", "max_list_entries"])}`);
  }
  if (limits.default_search_results > limits.max_search_results) {
    add(["limits", "default_search_results"], `must not exceed ${namer(["limits", "max_search_results"])}`);
  }

  const globalPolicy = policyFrom(DEFAULT_POLICY, doc.defaults ?? {}, ["defaults"], add);
  const agent = normalizeAgent(doc.agent ?? {}, add);
  const workdirs = normalizeWorkdirs(doc.workdirs, globalPolicy, agent, namer, add);

  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    registry: { server: { log_level, state_dir: stateDir }, limits, workdirs, agent },
  };
}

type Add = (path: KeyPath, reason: string) => void;

/**
 * The checks of the cross-field phase that need only one field each: the host paths. They are run
 * on a document that failed the shape check too, on every path-valued key that holds a string and
 * has no shape problem of its own, so a config with type errors and relative paths reports both at
 * once. (The full normalizer, which needs a well-shaped document, repeats them after the fix.)
 */
export function independentFieldProblems(raw: unknown, shapeProblems: readonly Problem[]): Problem[] {
  const reported = new Set(shapeProblems.map((p) => JSON.stringify(p.path)));
  const out: Problem[] = [];
  const at = (root: unknown, path: KeyPath): unknown => {
    let cur = root;
    for (const part of path) {
      if (cur === null || typeof cur !== "object") return undefined;
      cur = (cur as Record<string | number, unknown>)[part];
    }
    return cur;
  };
  const check = (path: KeyPath) => {
    const value = at(raw, path);
    if (typeof value !== "string" || reported.has(JSON.stringify(path))) return;
    const problem = hostPathProblem(value);
    if (problem) out.push({ path, reason: problem });
  };
  const listAt = (path: KeyPath): number => {
    const v = at(raw, path);
    return Array.isArray(v) ? v.length : 0;
  };
  check(["server", "state_dir"]);
  for (let i = 0; i < listAt(["workdirs"]); i++) check(["workdirs", i, "path"]);
  check(["agent", "provider_env_file"]);
  for (let i = 0; i < listAt(["agent", "acp_profiles"]); i++) check(["agent", "acp_profiles", i, "command"]);
  return out;
}

function pathCheck(text: string, path: KeyPath, add: Add): void {
  const problem = hostPathProblem(text);
  if (problem) add(path, problem);
}

function globsCheck(globs: readonly string[], path: KeyPath, add: Add): void {
  globs.forEach((g, i) => {
    if (g.trim() === "") add([...path, i], "a deny glob must not be empty");
    else if (g.includes("\0")) add([...path, i], "a deny glob must not contain NUL");
    else if (g.length > BOUNDS.maxDenyGlobChars) add([...path, i], `a deny glob must be at most ${BOUNDS.maxDenyGlobChars} characters`);
  });
}

/** Union in order, first occurrence wins: a workdir can add deny globs, never remove one. */
function unionGlobs(base: readonly string[], extra: readonly string[]): string[] {
  return [...new Set([...base, ...extra])];
}

/** Override-wins: each of `keys` as `raw` sets it, else as `base` has it (absent inherits). */
function inherit<T, K extends keyof T>(raw: Partial<Pick<T, K>>, base: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) out[k] = (raw[k] ?? base[k]) as T[K];
  return out;
}

/** In the order the normalized document lists them. */
const POLICY_KEYS = [
  "allow_hidden",
  "disable_default_deny",
  "extra_deny_globs",
  "max_read_bytes",
  "max_read_lines",
  "max_write_bytes",
  "binary_transfer_enabled",
  "max_binary_transfer_bytes",
  "cross_mounts",
  "refuse_hardlinked_reads",
  "respect_ignore_files",
] as const satisfies readonly (keyof WorkdirPolicy)[];

/** The agent scalars whose absence means the default, in the order the normalized document lists them. */
const AGENT_SCALAR_KEYS = [
  "enabled",
  "enable_fake_runtime",
  "bridge_timeout_seconds",
  "task_timeout_seconds",
  "interaction_timeout_seconds",
  "max_active_tasks",
  "retention_seconds",
] as const satisfies readonly (keyof AgentConfig)[];
const AGENT_DEFAULTS: Pick<AgentConfig, (typeof AGENT_SCALAR_KEYS)[number]> = DEFAULT_AGENT;

/** Scalars are override-wins (absent inherits); deny globs are a union with the base list. */
function policyFrom(base: WorkdirPolicy, raw: RawPolicy, path: KeyPath, add: Add): WorkdirPolicy {
  const own = raw.extra_deny_globs ?? [];
  globsCheck(own, [...path, "extra_deny_globs"], add);
  return { ...inherit(raw, base, POLICY_KEYS), extra_deny_globs: unionGlobs(base.extra_deny_globs, own) };
}

function normalizeAgent(raw: RawAgent, add: Add): AgentConfig {
  const spool = raw.result_spool_threshold_bytes ?? DEFAULT_AGENT.result_spool_threshold_bytes;
  if (spool > MAX_RESULT_SPOOL_THRESHOLD_BYTES) {
    add(["agent", "result_spool_threshold_bytes"], `must be at most ${MAX_RESULT_SPOOL_THRESHOLD_BYTES} (8 MiB)`);
  }
  const providerEnvFile = raw.provider_env_file ?? null;
  if (providerEnvFile !== null) pathCheck(providerEnvFile, ["agent", "provider_env_file"], add);

  const native = {} as Record<NativeRuntimeName, NativeRuntimeConfig>;
  for (const name of NATIVE) {
    const r = raw[name] ?? {};
    const d = DEFAULT_NATIVE_RUNTIMES[name];
    const bin = r.bin ?? d.bin;
    if (!isAcceptableBin(bin)) {
      add(["agent", name, "bin"], "must be an absolute path or a bare command name looked up on PATH");
    }
    native[name] = { enabled: r.enabled ?? d.enabled, bin, use_proxy: r.use_proxy ?? d.use_proxy };
  }

  return {
    ...inherit(raw, AGENT_DEFAULTS, AGENT_SCALAR_KEYS),
    result_spool_threshold_bytes: spool,
    approvals: raw.approvals ?? DEFAULT_AGENT.approvals,
    event_idle_timeout_seconds: idleTimeout(raw.event_idle_timeout_seconds),
    provider_env_file: providerEnvFile,
    codex: native.codex,
    claude: native.claude,
    qoder: native.qoder,
    proxy: normalizeProxy(raw.proxy ?? {}, add),
    acp_profiles: normalizeAcpProfiles(raw.acp_profiles ?? [], add),
    advice_rules: normalizeAdviceRules(raw.advice_rules ?? [], add),
  };
}

/** Absent: the default; 0: no idle timeout (null in the registry). */
function idleTimeout(raw: number | undefined): number | null {
  const seconds = raw ?? DEFAULT_AGENT.event_idle_timeout_seconds;
  return seconds === 0 ? null : seconds;
}

/**
 * A variable an ACP profile may point at its temp directory: an ordinary name, never one that
 * steers the loader, the Bun runtime, serverfs itself or command lookup.
 */
function tmpdirEnvProblem(name: string): string | null {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name)) return "a variable name: a letter or '_', then up to 63 letters, digits or '_'";
  if (/^(SERVERFS_|BUN_|LD_|DYLD_)/i.test(name) || /^(PATH|HOME|NODE_OPTIONS)$/i.test(name)) return `'${name}' must not be redirected to the temp directory`;
  return null;
}

function isAcceptableBin(bin: string): boolean {
  if (BARE_COMMAND.test(bin)) return true;
  return bin.length <= BOUNDS.maxBinChars && hostPathProblem(bin) === null;
}

function normalizeProxy(raw: NonNullable<RawAgent["proxy"]>, add: Add): ProxyConfig {
  const enabled = raw.enabled ?? false;
  let url: string | null = null;
  if (raw.url !== undefined) {
    const n = normalizeProxyUrl(raw.url);
    if ("reason" in n) add(["agent", "proxy", "url"], n.reason);
    else url = n.url;
  } else if (enabled) {
    add(["agent", "proxy", "url"], "is required when the proxy is enabled");
  }
  const extra: string[] = [];
  (raw.no_proxy ?? []).forEach((entry, i) => {
    const problem = noProxyEntryProblem(entry);
    if (problem) add(["agent", "proxy", "no_proxy", i], problem);
    else extra.push(entry.toLowerCase());
  });
  return { enabled, url, no_proxy: [...new Set([...MANDATORY_NO_PROXY, ...extra])] };
}

function normalizeAcpProfiles(raw: NonNullable<RawAgent["acp_profiles"]>, add: Add): AcpProfile[] {
  const seen = new Set<string>();
  const out: AcpProfile[] = [];
  let total = 0;
  raw.forEach((p, i) => {
    const at = (...rest: (string | number)[]): KeyPath => ["agent", "acp_profiles", i, ...rest];
    const runtime = `acp-${p.id}`;
    if ((RESERVED_RUNTIME_NAMES as readonly string[]).includes(p.id)) {
      add(at("id"), `'${p.id}' is a reserved runtime name (${RESERVED_RUNTIME_NAMES.join(", ")})`);
    } else if (runtime.length > 32) {
      add(at("id"), "the runtime id acp-<id> must be at most 32 characters");
    } else if (seen.has(p.id)) {
      add(at("id"), `duplicate profile id '${p.id}'`);
    }
    seen.add(p.id);

    const commandProblem = hostPathProblem(p.command) ?? executableProblem(p.command);
    if (commandProblem) add(at("command"), commandProblem);

    const args = p.args ?? [];
    args.forEach((a, j) => {
      if (a.includes("\0")) add(at("args", j), "an argument must not contain NUL");
      else if (Buffer.byteLength(a, "utf8") > BOUNDS.maxAcpArgBytes) {
        add(at("args", j), `an argument must be at most ${BOUNDS.maxAcpArgBytes} bytes`);
      }
    });
    const tmpdirEnv = p.tmpdir_env ?? [];
    tmpdirEnv.forEach((name, j) => {
      const problem = tmpdirEnvProblem(name);
      if (problem !== null) add(at("tmpdir_env", j), problem);
    });
    const profile = {
      id: p.id,
      runtime,
      command: p.command,
      args,
      use_proxy: p.use_proxy ?? ACP_DEFAULTS.use_proxy,
      ...(tmpdirEnv.length > 0 ? { tmpdir_env: tmpdirEnv } : {}),
      probe_timeout_seconds: p.probe_timeout_seconds ?? ACP_DEFAULTS.probe_timeout_seconds,
      shutdown_timeout_seconds: p.shutdown_timeout_seconds ?? ACP_DEFAULTS.shutdown_timeout_seconds,
    };
    const size = Buffer.byteLength(canonicalJson(profile), "utf8");
    total += size;
    if (size > BOUNDS.maxAcpProfileBytes) add(at(), `the profile is larger than ${BOUNDS.maxAcpProfileBytes} bytes encoded`);
    out.push({ ...profile, fingerprint: acpFingerprint(profile) });
  });
  if (total > BOUNDS.maxAcpProfilesTotalBytes) {
    add(["agent", "acp_profiles"], `the profiles together are larger than ${BOUNDS.maxAcpProfilesTotalBytes} bytes encoded`);
  }
  return out;
}

function normalizeWorkdirs(
  raw: readonly RawWorkdir[],
  global: WorkdirPolicy,
  agent: AgentConfig,
  namer: KeyNamer,
  add: Add,
): Workdir[] {
  const aliases = new Set<string>();
  const acpIds = new Set(agent.acp_profiles.map((p) => p.id));
  return raw.map((w, i): Workdir => {
    const at = (...rest: (string | number)[]): KeyPath => ["workdirs", i, ...rest];
    if (aliases.has(w.alias)) add(at("alias"), `duplicate alias '${w.alias}'`);
    aliases.add(w.alias);
    pathCheck(w.path, at("path"), add);

    let description: string | null = w.description?.trim() ?? null;
    if (description === "") description = null;
    if (description !== null) {
      if (description.includes("\0")) add(at("description"), "must not contain NUL");
      else if (description.length > BOUNDS.maxDescriptionChars) {
        add(at("description"), `must be at most ${BOUNDS.maxDescriptionChars} characters`);
      }
    }

    const read_only = w.read_only ?? true;
    const agent_mode: AgentMode = w.agent_mode ?? "disabled";
    const agent_runtimes = w.agent_runtimes ?? [];
    checkAgentPolicy({ read_only, agent_mode, agent_runtimes }, agent, acpIds, at, namer, add);

    return {
      alias: w.alias,
      path: w.path,
      description,
      read_only,
      agent_mode,
      agent_runtimes,
      ...policyFrom(global, w, at(), add),
    };
  });
}

function checkAgentPolicy(
  w: { read_only: boolean; agent_mode: AgentMode; agent_runtimes: readonly string[] },
  agent: AgentConfig,
  acpIds: ReadonlySet<string>,
  at: (...rest: (string | number)[]) => KeyPath,
  namer: KeyNamer,
  add: Add,
): void {
  const hasPolicy = w.agent_mode !== "disabled" || w.agent_runtimes.length > 0;
  if (!hasPolicy) return;
  if (!agent.enabled) {
    add(at(w.agent_mode !== "disabled" ? "agent_mode" : "agent_runtimes"),
      `agent policy needs the Agent Bridge enabled (${namer(["agent", "enabled"])} = true)`);
  }
  if (w.agent_mode === "disabled") {
    add(at("agent_runtimes"), `must be empty while ${namer(at("agent_mode"))} is disabled`);
    return;
  }
  if (w.agent_runtimes.length === 0) {
    add(at("agent_runtimes"), `agent_mode '${w.agent_mode}' needs at least one runtime`);
  }
  if (w.agent_mode === "workspace-write" && w.read_only) {
    add(at("read_only"), `agent_mode 'workspace-write' needs ${namer(at("read_only"))} = false`);
  }
  const seen = new Set<string>();
  w.agent_runtimes.forEach((rt, j) => {
    const here = at("agent_runtimes", j);
    if (seen.has(rt)) add(here, `duplicate runtime '${rt}'`);
    seen.add(rt);
    const isNative = isNativeRuntime(rt);
    if ((isNative || rt.startsWith("acp-")) && w.agent_mode !== "workspace-write") {
      add(here, `runtime '${rt}' requires agent_mode 'workspace-write' (review is refused for native and ACP runtimes)`);
    }
    if (isNative && !agent[rt as NativeRuntimeName].enabled) {
      add(here, `runtime '${rt}' is allowlisted but not enabled (${namer(["agent", rt, "enabled"])} = true)`);
    } else if (rt === "fake" && !agent.enable_fake_runtime) {
      add(here, `runtime 'fake' needs ${namer(["agent", "enable_fake_runtime"])} = true`);
    } else if (rt.startsWith("acp-") && !acpIds.has(rt.slice(4))) {
      add(here, `runtime '${rt}' is allowlisted but no ACP profile '${rt.slice(4)}' is configured`);
    }
  });
}
