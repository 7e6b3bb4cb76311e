// Whether an enabled native runtime's own settings let commands run without a human. serverfs
// pins what it can (Codex approval policy and reviewer, Claude/Qoder permission mode), but a
// provider only raises an approval where its own sandbox, exec policy or permission rules ask:
// Codex with `sandbox_mode = "danger-full-access"` runs ordinary commands without asking, Claude
// runs what `permissions.allow` lists. The files read are the ones the Bridge's provider children
// will use (HOME / CODEX_HOME / CLAUDE_CONFIG_DIR from the Bridge's environment plus the provider
// env file, of which only those keys are kept). Nothing printed names a host path or a value.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import type { NativeRuntimeName, Registry } from "../../config/types.ts";
import { readProviderEnvFile } from "../../runtimes/kernel/provider-env.ts";
import { scrubEnv } from "../../../platform/index.ts";
import { ok, warn, type CheckResult } from "../types.ts";
import { PLATFORM_NAME } from "../../../platform/os.ts";

const MAX_SETTINGS_BYTES = 1 << 20;
const PATH_KEYS = ["HOME", "USERPROFILE", "CODEX_HOME", "CLAUDE_CONFIG_DIR"] as const;
// Tools that only read: an allow rule for them puts nothing past a human that matters here.
const READ_ONLY_TOOLS = new Set(["Read", "Glob", "Grep", "LS", "TodoWrite", "WebSearch"]);
const MAX_NAMED = 8;

type Env = Record<string, string | undefined>;

/** The path variables a provider child will see: the Bridge's environment, then the env file's. */
export function providerPathEnv(registry: Registry, base: Env = process.env): Env {
  const env: Env = { ...scrubEnv(base) };
  const file = registry.agent.provider_env_file;
  if (file !== null) {
    try {
      const values = readProviderEnvFile(file);
      for (const k of PATH_KEYS) if (values[k] !== undefined) env[k] = values[k];
    } catch {
      // state.provider_env_file reports it; the Bridge would not start
    }
  }
  return env;
}

function homeOf(env: Env): string {
  return env.HOME || env.USERPROFILE || os.homedir();
}

type Read = { kind: "missing" } | { kind: "unreadable" } | { kind: "ok"; text: string };

function readBounded(file: string): Read {
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > MAX_SETTINGS_BYTES) return { kind: "unreadable" };
    return { kind: "ok", text: fs.readFileSync(file, "utf8") };
  } catch (err) {
    return (err as { code?: string }).code === "ENOENT" ? { kind: "missing" } : { kind: "unreadable" };
  }
}

function record(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

// ------------------------------------------------------------------------------------------------
// Codex: config.toml (top level, or the profile it selects) and exec-policy rules.

const CODEX_HINT =
  'set sandbox_mode = "workspace-write" (or "read-only") in $CODEX_HOME/config.toml for the Bridge user and remove decision = "allow" rules from $CODEX_HOME/rules, or accept that those commands run without a human';

export function codexApprovalsCheck(env: Env): CheckResult {
  const id = "runtime.codex.approvals";
  const label = "runtime codex approvals";
  const codexHome = env.CODEX_HOME || path.join(homeOf(env), ".codex");
  const findings: string[] = [];
  const notes: string[] = [];
  const read = readBounded(path.join(codexHome, "config.toml"));
  if (read.kind === "unreadable") return warn(id, label, "$CODEX_HOME/config.toml cannot be read, so whether commands reach a human is unknown", CODEX_HINT);
  if (read.kind === "ok") {
    let config: Record<string, unknown>;
    try {
      config = parseToml(read.text) as Record<string, unknown>;
    } catch {
      // The parser's message quotes the file; it is not shown.
      return warn(id, label, "$CODEX_HOME/config.toml is not valid TOML, so whether commands reach a human is unknown", CODEX_HINT);
    }
    const profileName = typeof config.profile === "string" ? config.profile : null;
    const profile = profileName === null ? {} : record(record(config.profiles)[profileName]);
    const pick = (key: string): { value: unknown; where: string } =>
      profile[key] !== undefined ? { value: profile[key], where: `the active profile's ${key}` } : { value: config[key], where: key };
    const sandbox = pick("sandbox_mode");
    if (sandbox.value === "danger-full-access") findings.push(`${sandbox.where} = "danger-full-access" (commands run unsandboxed and Codex does not ask)`);
    const perms = pick("default_permissions");
    if (perms.value === ":danger-full-access") findings.push(`${perms.where} = ":danger-full-access" (commands run unsandboxed and Codex does not ask)`);
    const policy = pick("approval_policy").value;
    if (typeof policy === "string" && policy !== "on-request") notes.push(`approval_policy is overridden by serverfs (on-request)`);
  }
  const allowRules = countAllowRules(path.join(codexHome, "rules"));
  if (allowRules > 0) findings.push(`${allowRules} exec-policy rule(s) in $CODEX_HOME/rules with decision = "allow" (matching commands run without asking)`);
  if (findings.length > 0) return warn(id, label, `codex will run commands without putting them to a human: ${findings.join("; ")}`, CODEX_HINT);
  const base = read.kind === "missing" ? "no $CODEX_HOME/config.toml (Codex defaults)" : "no setting lets commands skip the human";
  return ok(id, label, `${base}; Codex asks only where its sandbox or exec policy requires${notes.length ? `; ${notes.join("; ")}` : ""}`);
}

function countAllowRules(dir: string): number {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".rules")).slice(0, 256);
  } catch {
    return 0;
  }
  let n = 0;
  for (const name of names) {
    const read = readBounded(path.join(dir, name));
    if (read.kind === "ok") n += read.text.match(/\bdecision\s*=\s*["']allow["']/g)?.length ?? 0;
  }
  return n;
}

// ------------------------------------------------------------------------------------------------
// Claude and Qoder: JSON settings with Claude Code's permission schema.

interface SettingsSource {
  /** How the file is named in the output: never its path. */
  name: string;
  file: string;
}

function managedClaudeSettings(platform: NodeJS.Platform): string {
  if (platform === "darwin") return "/Library/Application Support/ClaudeCode/managed-settings.json";
  if (platform === "win32") return "C:\\Program Files\\ClaudeCode\\managed-settings.json";
  return "/etc/claude-code/managed-settings.json";
}

export function settingsSources(runtime: "claude" | "qoder", env: Env, platform: NodeJS.Platform = PLATFORM_NAME): SettingsSource[] {
  if (runtime === "qoder") return [{ name: "~/.qoder/settings.json", file: path.join(homeOf(env), ".qoder", "settings.json") }];
  const dir = env.CLAUDE_CONFIG_DIR || path.join(homeOf(env), ".claude");
  // serverfs loads only the user settings source; managed (policy) settings always apply.
  return [
    { name: "user settings", file: path.join(dir, "settings.json") },
    { name: "managed settings", file: managedClaudeSettings(platform) },
  ];
}

function toolName(rule: unknown): string {
  if (typeof rule !== "string") return "other";
  const name = rule.split("(")[0]!.trim();
  return /^[A-Za-z0-9_*-]{1,64}$/.test(name) ? name : "other";
}

export function permissionSettingsCheck(runtime: "claude" | "qoder", sources: readonly SettingsSource[]): CheckResult {
  const id = `runtime.${runtime}.approvals`;
  const label = `runtime ${runtime} approvals`;
  const hint = `remove those entries from ${runtime === "claude" ? "the Bridge user's Claude settings" : "~/.qoder/settings.json"}, or accept that those tool calls run without a human`;
  const findings: string[] = [];
  const notes: string[] = [];
  for (const src of sources) {
    const read = readBounded(src.file);
    if (read.kind === "missing") continue;
    let settings: Record<string, unknown>;
    try {
      if (read.kind === "unreadable") throw new Error("unreadable");
      settings = record(JSON.parse(read.text));
    } catch {
      findings.push(`${src.name} cannot be read as JSON, so whether tool calls reach a human is unknown`);
      continue;
    }
    const permissions = record(settings.permissions);
    const allow = Array.isArray(permissions.allow) ? permissions.allow : [];
    const counts = new Map<string, number>();
    for (const rule of allow) {
      const tool = toolName(rule);
      if (!READ_ONLY_TOOLS.has(tool)) counts.set(tool, (counts.get(tool) ?? 0) + 1);
    }
    if (counts.size > 0) {
      const named = [...counts].slice(0, MAX_NAMED).map(([t, c]) => `${t} ×${c}`);
      if (counts.size > MAX_NAMED) named.push(`${counts.size - MAX_NAMED} more tool(s)`);
      findings.push(`${src.name} permissions.allow lets ${named.join(", ")} run without asking`);
    }
    const sandbox = record(settings.sandbox);
    // autoAllowBashIfSandboxed defaults to false (the settings schema shipped with SDK 0.3.332).
    if (sandbox.enabled === true && sandbox.autoAllowBashIfSandboxed === true) {
      findings.push(`${src.name} sandbox.autoAllowBashIfSandboxed (sandboxed Bash commands run without asking)`);
    }
    const pre = record(settings.hooks).PreToolUse;
    if (Array.isArray(pre) && pre.length > 0) findings.push(`${src.name} hooks.PreToolUse can allow tool calls without asking`);
    if (typeof permissions.defaultMode === "string" && permissions.defaultMode !== "default") {
      notes.push(`permissions.defaultMode in ${src.name} is overridden by serverfs (default)`);
    }
  }
  if (findings.length > 0) return warn(id, label, `${runtime} will run some tool calls without putting them to a human: ${findings.join("; ")}`, hint);
  return ok(id, label, `permission mode pinned to default; no allow rules, sandbox auto-allow or PreToolUse hooks found${notes.length ? `; ${notes.join("; ")}` : ""}`);
}

export function approvalsCheck(registry: Registry, name: NativeRuntimeName, base: Env = process.env): CheckResult {
  const env = providerPathEnv(registry, base);
  if (name === "codex") return codexApprovalsCheck(env);
  return permissionSettingsCheck(name, settingsSources(name, env));
}
