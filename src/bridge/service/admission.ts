// Admission of task.submit (docs/design/task-lifecycle.md#submit): input checks, idempotent
// replay, authorization, the immutable manifest, then the writer lease and recovery guard
// (docs/design/lease-and-guard.md) and the task row. Submits are serialized, so idempotency, the
// lease and the active-task cap are decided atomically.
import { adviceManifest } from "./advice.ts";
import { ServerfsError } from "../../errors.ts";
import type { AdviceRule, Registry, TaskProfile, Workdir } from "../../config/types.ts";
import type { RuntimeAdapter } from "../../runtimes/types.ts";
import { VERSION } from "../../version.ts";
import { canonicalJson } from "../../common/canonical-json.ts";
import { utf8Bytes } from "../../common/utf8.ts";
import { leaseFiles } from "../deployment.ts";
import { publishGuard, removeGuard } from "../guard.ts";
import { newId, sha256Hex } from "../ids.ts";
import { isTerminal } from "../lifecycle.ts";
import { MAX_CORRELATION_BYTES, MAX_MODEL_BYTES, type BridgeLimits } from "../limits.ts";
import { taskRunId } from "../outside-runs.ts";
import { nowIso } from "../store/tasks.ts";
import { authorize } from "./authorize.ts";
import type { ServiceCore } from "./core.ts";
import type { Recovery } from "./recovery.ts";
import type { RunPlan } from "./task-run.ts";
import type { HandlerParams, SubmitResult } from "../rpc/methods.ts";
import type { RuntimeInfo } from "../../config/runtime-info.ts";

/** task.submit's params as a handler receives them (validated, defaults applied). */
export type SubmitParams = HandlerParams<"task.submit">;

export type { SubmitResult };

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

/** The refusal a submit from a newer (or older) configuration than the Bridge's gets. */
export function configStale(): ServerfsError {
  return new ServerfsError(
    "AGENT_BRIDGE_CONFIG_STALE",
    "the Agent Bridge is running another configuration than this one (the file changed since the Bridge started); restart the Bridge: serverfs service stop, then serverfs service start (or stop and start 'serverfs bridge --config FILE' by hand)",
  );
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

function policySha256(w: Workdir): string {
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
  adviceRules: readonly AdviceRule[];
}

/** The immutable execution manifest: canonical JSON and its SHA-256. Never a host path. */
export function buildManifest(m: ManifestInput): { json: string; sha256: string } {
  const manifest = {
    schema_version: 3,
    bridge_version: VERSION,
    protocol_version: 1,
    runtime: { name: m.params.runtime, version: m.runtimeVersion, in_flight_recovery: m.inFlightRecovery },
    workspace: { alias: m.workdir.alias, slot: null, relative_cwd: m.relativeCwd, profile: m.params.profile },
    policy: { read_only: m.workdir.read_only, agent_mode: m.workdir.agent_mode, policy_sha256: policySha256(m.workdir) },
    limits: m.limits,
    advisor: adviceManifest(m.adviceRules),
    continuation: { from_task_id: m.params.continue_from_task_id },
    model: { requested: m.params.model },
    correlation_id: m.params.correlation_id,
    idempotency_key: m.params.idempotency_key,
    deadline_at: m.deadlineAt,
  };
  const json = canonicalJson(manifest);
  return { json, sha256: sha256Hex(json) };
}

/** The profile names a caller may ask for. */
export function parseProfile(profile: string, message: string): TaskProfile {
  if (profile !== "review" && profile !== "workspace-write") throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", message);
  return profile;
}

export class Admission {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly core: ServiceCore,
    private readonly recovery: Recovery,
    private readonly gc: () => void,
    /** Starts the admitted run; called with the lease and guard held and the task row written. */
    private readonly launch: (plan: RunPlan, adapter: RuntimeAdapter) => void,
  ) {}

  submit(p: SubmitParams): Promise<SubmitResult> {
    const run = this.chain.then(() => this.admit(p));
    this.chain = run.catch(() => {});
    return run;
  }

  private get registry(): Registry {
    return this.core.deps.registry;
  }

  private async admit(p: SubmitParams): Promise<SubmitResult> {
    const { core } = this;
    const { limits, store } = core;
    if (core.closed) throw new ServerfsError("BRIDGE_CLOSED", "the Bridge is shutting down");
    validateIdentifiers(p);
    this.gc();
    if (utf8Bytes(p.prompt) > limits.max_prompt_bytes) {
      throw new ServerfsError("AGENT_PROMPT_TOO_LARGE", `prompt exceeds ${limits.max_prompt_bytes} bytes`);
    }
    const profile = parseProfile(p.profile, `unknown profile '${p.profile.slice(0, 64)}'`);
    const rel = normalizeRelativePath(p.path);
    const fingerprint = requestFingerprint(p, rel);
    const replay = this.idempotentReplay(p, fingerprint);
    if (replay) return replay;
    // Before any workdir is looked up: a Bridge that loaded another configuration than the
    // caller's must not run a task under workdirs the caller's file no longer names.
    if (p.config_identity !== null && p.config_identity !== core.configIdentity) throw configStale();
    const auth = authorize(this.registry, p.runtime, p.workdir, profile, rel);
    const continueSession = this.continuation(p, profile);
    const adapter = core.deps.adapters.get(p.runtime);
    if (!adapter) throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `runtime '${p.runtime.slice(0, 64)}' is not available`);
    let info: RuntimeInfo;
    try {
      info = await adapter.probe();
    } catch {
      throw new ServerfsError("AGENT_RUNTIME_UNAVAILABLE", `runtime '${p.runtime}' could not be probed`);
    }
    const deadlineAt = new Date(Date.now() + limits.task_timeout_seconds * 1000).toISOString();
    const manifest = buildManifest({
      params: p,
      relativeCwd: rel,
      workdir: auth.workdir,
      runtimeVersion: info.version === null || info.version === undefined ? null : core.hostRedactor.text(info.version),
      inFlightRecovery: info.in_flight_recovery ?? "none",
      limits,
      deadlineAt,
      adviceRules: core.deps.registry.agent.advice_rules,
    });
    // Re-check after the awaits above (another submit may have committed the key meanwhile).
    const again = this.idempotentReplay(p, fingerprint);
    if (again) return again;

    const workspaceWrite = profile === "workspace-write";
    const files = leaseFiles(this.registry, p.workdir);
    if (workspaceWrite) {
      if (!core.deps.leases.isHeld(p.workdir)) await this.recovery.lazyReconcile(p.workdir, files.guardFile);
      core.deps.leases.acquire(p.workdir);
    }
    const taskId = newId("agt_");
    const runId = taskRunId(taskId);
    let inserted = false;
    try {
      const now = nowIso();
      store.insert(
        {
          task_id: taskId,
          runtime: p.runtime,
          workdir_alias: p.workdir,
          relative_cwd: rel,
          profile,
          created_at: now,
          updated_at: now,
          deadline_at: deadlineAt,
          continue_from_task_id: p.continue_from_task_id,
          correlation_id: p.correlation_id,
          idempotency_key: p.idempotency_key,
          requested_model: p.model,
          request_fingerprint: fingerprint,
          manifest_json: manifest.json,
          manifest_sha256: manifest.sha256,
          run_id: runId,
          native_session_id: continueSession,
        },
        limits.max_active_tasks,
      );
      inserted = true;
      if (workspaceWrite) {
        publishGuard(files.guardFile, {
          key: `alias:${p.workdir}`,
          task_id: taskId,
          run_id: runId,
          runtime: p.runtime,
          workdir_alias: p.workdir,
          correlation_id: p.correlation_id,
          native_session_id: continueSession,
          native_turn_id: null,
        });
      }
      const plan: RunPlan = {
        taskId,
        alias: p.workdir,
        runtime: p.runtime,
        guardFile: workspaceWrite ? files.guardFile : null,
        prompt: p.prompt,
        root: auth.root,
        cwd: auth.cwd,
        relativeCwd: rel,
        profile,
        requestedModel: p.model,
        continueSessionId: continueSession,
        runId,
      };
      this.launch(plan, adapter);
    } catch (err) {
      if (workspaceWrite) {
        if (inserted) removeGuard(files.guardFile, taskId);
        core.deps.leases.release(p.workdir);
      }
      if (inserted) {
        core.active.delete(taskId);
        try {
          store.transition(taskId, "interrupted", { error_code: "BRIDGE_SCHEDULING_FAILED", error_message: "task could not be scheduled" });
        } catch {
          // already terminal
        }
      }
      throw err;
    }
    return { task_id: taskId, status: "queued", correlation_id: p.correlation_id, idempotency_key: p.idempotency_key };
  }

  /** A continuation resumes the prior task's native session: same runtime and workdir, no escalation. */
  private continuation(p: SubmitParams, profile: TaskProfile): string | null {
    if (p.continue_from_task_id === null) return null;
    const prior = this.core.store.get(p.continue_from_task_id);
    if (!prior) throw new ServerfsError("AGENT_TASK_NOT_FOUND", "continue_from_task_id does not name a task");
    if (prior.runtime !== p.runtime || prior.workdir_alias !== p.workdir) {
      throw new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "a continuation must use the same runtime and workdir");
    }
    if (prior.profile === "review" && profile === "workspace-write") {
      throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", "a continuation cannot escalate review to workspace-write");
    }
    if (!isTerminal(prior.status) || !prior.native_session_id) {
      throw new ServerfsError("AGENT_SESSION_NOT_RESUMABLE", "the prior task is not finished or has no resumable session");
    }
    return prior.native_session_id;
  }

  private idempotentReplay(p: SubmitParams, fingerprint: string): SubmitResult | null {
    if (p.idempotency_key === null) return null;
    const hit = this.core.store.findIdempotent(p.idempotency_key);
    if (!hit) return null;
    if (hit.request_fingerprint !== fingerprint) {
      throw new ServerfsError("AGENT_IDEMPOTENCY_CONFLICT", "idempotency_key was already used for a different request");
    }
    const task = this.core.store.require(hit.task_id);
    return { task_id: task.task_id, status: task.status, correlation_id: task.correlation_id, idempotency_key: task.idempotency_key };
  }
}
