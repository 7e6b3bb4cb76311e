// The pure parts of task.submit (docs/design/bridge-rpc.md): input checks, path normalisation,
// authorization against the registry, the request fingerprint and the immutable manifest.
import fs from "node:fs";
import path from "node:path";
import { ServerfsError, errnoCode } from "../errors.ts";
import type { Registry, TaskProfile, Workdir } from "../config/types.ts";
import { RESERVED_RUNTIME_NAMES } from "../config/types.ts";
import type { PathPolicy } from "../fs/policy.ts";
import { workdirPolicy } from "../fs/workdir-policy.ts";
import { VERSION } from "../version.ts";
import { canonicalJson } from "../common/canonical-json.ts";
import { isWithin } from "../common/paths.ts";
import { utf8Bytes } from "../common/utf8.ts";
import { sha256Hex } from "./ids.ts";
import type { BridgeLimits } from "./limits.ts";
import type { HandlerParams } from "./rpc/methods.ts";
import { MAX_CORRELATION_BYTES, MAX_MODEL_BYTES } from "./limits.ts";

/** task.submit's params as a handler receives them (validated, defaults applied). */
export type SubmitParams = HandlerParams<"task.submit">;

const PROFILE_RANK: Record<string, number> = { disabled: 0, review: 1, "workspace-write": 2 };
const NATIVE = new Set<string>(["codex", "claude", "qoder"]);

function hasControl(s: string, allowDel = false): boolean {
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c < 32 || (!allowDel && c === 127)) return true;
  }
  return false;
}

export function validateIdentifiers(p: SubmitParams): void {
  if (p.model !== null) {
    if (p.model.length === 0 || p.model.trim() !== p.model || utf8Bytes(p.model) > MAX_MODEL_BYTES || hasControl(p.model)) {
      throw new ServerfsError("INVALID_REQUEST", "model must be a non-empty id without surrounding space or control characters, ≤ 512 bytes");
    }
  }
  if (p.correlation_id !== null) {
    if (utf8Bytes(p.correlation_id) > MAX_CORRELATION_BYTES || hasControl(p.correlation_id)) {
      throw new ServerfsError("INVALID_REQUEST", "correlation_id must be ≤ 256 bytes without control characters");
    }
  }
  if (p.idempotency_key !== null) {
    if (p.idempotency_key.length === 0 || utf8Bytes(p.idempotency_key) > MAX_CORRELATION_BYTES || hasControl(p.idempotency_key)) {
      throw new ServerfsError("INVALID_REQUEST", "idempotency_key must be non-empty, ≤ 256 bytes, without control characters");
    }
  }
}

/** "" is the root; NUL, absolute, backslash, drive prefixes and any ".." are refused. */
export function normalizeRelativePath(raw: string): string {
  if (raw.includes("\0") || raw.includes("\\") || raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) {
    throw new ServerfsError("INVALID_WORKDIR_PATH", "path must be relative to the workdir");
  }
  const parts = raw.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) throw new ServerfsError("INVALID_WORKDIR_PATH", "path must not contain '..'");
  return parts.join("/");
}

export function requestFingerprint(p: SubmitParams, normalizedPath: string): string {
  return sha256Hex(
    canonicalJson({
      runtime: p.runtime,
      workdir: p.workdir,
      path: normalizedPath,
      profile: p.profile,
      prompt_sha256: sha256Hex(p.prompt),
      requested_model: p.model,
      continue_from_task_id: p.continue_from_task_id,
      correlation_id: p.correlation_id,
    }),
  );
}

export function isNativeRuntime(runtime: string): boolean {
  return NATIVE.has(runtime);
}

/** Runtimes that run a foreign agent with its own tools: they must hold the writer lease. */
export function requiresWorkspaceWrite(runtime: string): boolean {
  return NATIVE.has(runtime) || runtime.startsWith("acp-");
}

export function isKnownRuntime(registry: Registry, runtime: string): boolean {
  return (RESERVED_RUNTIME_NAMES as readonly string[]).includes(runtime) || registry.agent.acp_profiles.some((p) => p.runtime === runtime);
}

export interface Authorized {
  workdir: Workdir;
  /** Real path of the workdir root. */
  root: string;
  /** Real path of the starting directory. */
  cwd: string;
}

// One PathPolicy per configured workdir object, built by the same workdirPolicy() as the file
// tools (with the same case-sensitivity probe), so the start directory of a task obeys exactly
// the hidden, deny and reserved-name rules a file call does.
const startPolicies = new WeakMap<Workdir, PathPolicy>();

/**
 * The file tools' path policy applied to a task's starting directory (normalised, "" = root):
 * RESERVED_PATH / HIDDEN_PATH_NOT_ALLOWED / DENIED_PATH. serve calls this before its RPC and the
 * Bridge calls it again inside `authorize`, since a peer can reach the socket directly.
 */
export function checkStartPath(workdir: Workdir, rel: string, shown: string = rel): void {
  let policy = startPolicies.get(workdir);
  if (!policy) {
    policy = workdirPolicy(workdir).policy;
    startPolicies.set(workdir, policy);
  }
  policy.check(workdir.alias, rel === "" ? [] : rel.split("/"), shown);
}

/** Policy (docs/agent-bridge.md, task lifecycle): workdir, mode, allowlist, profile rank, writability, then the starting directory. */
export function authorize(registry: Registry, runtime: string, alias: string, profile: TaskProfile, rel: string): Authorized {
  const workdir = registry.workdirs.find((w) => w.alias === alias);
  if (!workdir) throw new ServerfsError("WORKDIR_NOT_FOUND", `workdir '${alias.slice(0, 64)}' is not configured`);
  if (workdir.agent_mode === "disabled") throw new ServerfsError("AGENT_DISABLED", `agent tasks are disabled on workdir ${alias}`);
  if (!workdir.agent_runtimes.includes(runtime)) {
    throw new ServerfsError("AGENT_RUNTIME_NOT_ALLOWED", `runtime '${runtime.slice(0, 64)}' is not allowed on workdir ${alias}`);
  }
  if (PROFILE_RANK[profile]! > PROFILE_RANK[workdir.agent_mode]!) {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `profile ${profile} exceeds workdir ${alias}'s agent mode`);
  }
  if (profile === "workspace-write" && workdir.read_only) {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `workdir ${alias} is read-only`);
  }
  if (requiresWorkspaceWrite(runtime) && profile !== "workspace-write") {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `runtime ${runtime} requires the workspace-write profile`);
  }
  // Lexical first, so a refused name is refused whether or not it exists.
  checkStartPath(workdir, rel);
  let root: string;
  let cwd: string;
  try {
    root = fs.realpathSync(workdir.path);
    cwd = fs.realpathSync(path.join(root, rel));
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw new ServerfsError("WORKDIR_PATH_NOT_FOUND", `path '${rel.slice(0, 200)}' does not exist`);
    throw new ServerfsError("INVALID_WORKDIR_PATH", `path '${rel.slice(0, 200)}' cannot be resolved`);
  }
  if (!isWithin(cwd, root)) {
    throw new ServerfsError("INVALID_WORKDIR_PATH", `path '${rel.slice(0, 200)}' leaves the workdir`);
  }
  // And again on where it resolved: a symlink must not lead into a hidden, denied or reserved directory.
  if (cwd !== root) checkStartPath(workdir, path.relative(root, cwd).split(path.sep).join("/"), rel);
  if (!fs.statSync(cwd).isDirectory()) throw new ServerfsError("WORKDIR_PATH_NOT_FOUND", `path '${rel.slice(0, 200)}' is not a directory`);
  return { workdir, root, cwd };
}

export function policySha256(w: Workdir): string {
  return sha256Hex(
    canonicalJson({ alias: w.alias, slot: null, read_only: w.read_only, agent_mode: w.agent_mode, agent_runtimes: [...w.agent_runtimes].sort() }),
  );
}

export interface ManifestInput {
  params: SubmitParams;
  relativeCwd: string;
  workdir: Workdir;
  runtimeVersion: string | null;
  inFlightRecovery: string;
  limits: BridgeLimits;
  deadlineAt: string;
}

/** The immutable execution manifest (docs/agent-bridge.md): canonical JSON and its SHA-256. Never a host path. */
export function buildManifest(m: ManifestInput): { json: string; sha256: string } {
  const manifest = {
    schema_version: 2,
    bridge_version: VERSION,
    protocol_version: 1,
    runtime: { name: m.params.runtime, version: m.runtimeVersion, in_flight_recovery: m.inFlightRecovery },
    workspace: { alias: m.workdir.alias, slot: null, relative_cwd: m.relativeCwd, profile: m.params.profile },
    policy: { read_only: m.workdir.read_only, agent_mode: m.workdir.agent_mode, policy_sha256: policySha256(m.workdir) },
    limits: m.limits,
    advisor: { enabled: false, preflight_status: "disabled" },
    continuation: { from_task_id: m.params.continue_from_task_id },
    model: { requested: m.params.model },
    correlation_id: m.params.correlation_id,
    idempotency_key: m.params.idempotency_key,
    deadline_at: m.deadlineAt,
  };
  const json = canonicalJson(manifest);
  return { json, sha256: sha256Hex(json) };
}
