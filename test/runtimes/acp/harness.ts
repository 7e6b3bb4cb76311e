// Test harness for the ACP adapter: a real TaskContext (real contained processes through the
// platform, real files) that records what the adapter did, in order. The Bridge service is the
// production TaskContext; this one lets a test drive the adapter directly and decide how a human
// answers each approval.
import * as fs from "node:fs";
import * as path from "node:path";
import { containment } from "../../../platform/index.ts";
import { providerEnvironment } from "../../../src/runtimes/kernel/provider-env.ts";
import type { ContainedProcess } from "../../../platform/types.ts";
import { acpFingerprint } from "../../../src/config/fingerprint.ts";
import type { AcpProfile, AgentConfig } from "../../../src/config/types.ts";
import { AcpAdapter } from "../../../src/runtimes/acp/adapter.ts";
import type {
  AdapterResult,
  ApprovalRequest,
  ApprovalResolution,
  ProviderSpawn,
  QuestionResolution,
  RuntimeServices,
  TaskContext,
} from "../../../src/runtimes/types.ts";
import { BUN } from "../../support/proc.ts";
import { tempDir } from "../../support/temp.ts";
import { RecordingDiagnostics } from "../service-rig.ts";

export { BUN };
export const FIXTURES = path.resolve(import.meta.dir, "../../fixtures/acp");

export function profileFor(fixture: string, args: string[] = [], overrides: Partial<AcpProfile> = {}): AcpProfile {
  const id = overrides.id ?? "fixture";
  const command = overrides.command ?? BUN;
  const fullArgs = overrides.args ?? [path.join(FIXTURES, fixture), ...args];
  const useProxy = overrides.use_proxy ?? false;
  return {
    id,
    runtime: `acp-${id}`,
    command,
    args: fullArgs,
    use_proxy: useProxy,
    ...(overrides.tmpdir_env ? { tmpdir_env: overrides.tmpdir_env } : {}),
    probe_timeout_seconds: overrides.probe_timeout_seconds ?? 20,
    shutdown_timeout_seconds: overrides.shutdown_timeout_seconds ?? 3,
    fingerprint: acpFingerprint({ id, command, args: fullArgs, use_proxy: useProxy, ...(overrides.tmpdir_env ? { tmpdir_env: overrides.tmpdir_env } : {}) }),
  };
}

export function agentConfig(overrides: Partial<AgentConfig> = {}): Pick<AgentConfig, "proxy" | "event_idle_timeout_seconds"> {
  return {
    proxy: overrides.proxy ?? { enabled: false, url: null, no_proxy: ["127.0.0.1", "localhost", "::1"] },
    event_idle_timeout_seconds: overrides.event_idle_timeout_seconds ?? null,
  };
}

/** Capability snapshots kept the way the Bridge store keeps them: JSON text keyed by fingerprint. */
export class MemoryCapabilities implements RuntimeServices {
  readonly rows = new Map<string, { snapshot: string; measured_at: string }>();
  loadCapabilities(fingerprint: string): { snapshot: unknown; measured_at: string } | null {
    const row = this.rows.get(fingerprint);
    return row ? { snapshot: JSON.parse(row.snapshot), measured_at: row.measured_at } : null;
  }
  save(fingerprint: string, snapshot: unknown): void {
    this.rows.set(fingerprint, { snapshot: JSON.stringify(snapshot), measured_at: new Date().toISOString() });
  }
}

export type Approver = (req: ApprovalRequest, index: number) => Promise<ApprovalResolution> | ApprovalResolution;

let runCounter = 0;

export class TestTask implements TaskContext {
  readonly taskId: string;
  readonly runId: string;
  readonly workdir = "w";
  readonly relativeCwd = ".";
  readonly profile: "review" | "workspace-write";
  readonly controller = new AbortController();
  /** Everything the adapter did through the context, in order. */
  readonly log: Array<{ kind: string; data: unknown }> = [];
  readonly events: Array<{ type: string; payload: Record<string, unknown>; at: string }> = [];
  readonly approvals: ApprovalRequest[] = [];
  readonly procs: ContainedProcess[] = [];
  readonly spawns: ProviderSpawn[] = [];
  approver: Approver = () => ({ decision: "cancel_task", granted_permission_ids: [] });
  onApprovalRequested: (() => void) | null = null;

  constructor(
    readonly workdirRoot: string,
    readonly prompt: string,
    readonly services: MemoryCapabilities,
    opts: { continueNativeSessionId?: string | null; requestedModel?: string | null; profile?: "review" | "workspace-write" } = {},
    /** The Bridge's provider environment (scrubbed Bridge env + provider env file), as the service passes it. */
    private readonly providerEnv: Record<string, string> = providerEnvironment(null).env,
  ) {
    runCounter++;
    this.taskId = `task-${process.pid}-${runCounter}`;
    this.runId = `acp-test-${process.pid}-${runCounter}-${Date.now()}`;
    this.continueNativeSessionId = opts.continueNativeSessionId ?? null;
    this.requestedModel = opts.requestedModel ?? null;
    this.profile = opts.profile ?? "workspace-write";
  }

  readonly continueNativeSessionId: string | null;
  readonly requestedModel: string | null;

  get cwd(): string {
    return this.workdirRoot;
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  async spawn(spec: ProviderSpawn): Promise<ContainedProcess> {
    this.spawns.push(spec);
    const proc = await containment().spawn({
      argv: spec.argv,
      cwd: spec.cwd ?? this.cwd,
      env: { ...this.providerEnv, ...(spec.env ?? {}), SERVERFS_RUN_ID: this.runId },
      runId: this.runId,
      stderrLimitBytes: spec.stderrLimitBytes ?? 64 * 1024,
    });
    this.procs.push(proc);
    this.log.push({ kind: "spawn", data: proc.pid });
    return proc;
  }
  emitEvent(type: string, payload: Record<string, unknown>): void {
    this.events.push({ type, payload, at: new Date().toISOString() });
    this.log.push({ kind: "event", data: type });
  }
  lastEvent(): { type: string; at: string } | null {
    const last = this.events.at(-1);
    return last === undefined ? null : { type: last.type, at: last.at };
  }
  async requestApproval(request: ApprovalRequest): Promise<ApprovalResolution> {
    this.approvals.push(request);
    this.log.push({ kind: "approval", data: request.title });
    this.onApprovalRequested?.();
    return this.approver(request, this.approvals.length - 1);
  }
  askQuestion(): Promise<QuestionResolution> {
    throw new Error("this harness answers no questions: form questions are tested through the Bridge (elicitation.test.ts)");
  }
  abandonInteraction(): void {
    this.log.push({ kind: "abandon", data: null });
  }
  recordNativeIds(sessionId: string | null): void {
    this.log.push({ kind: "session", data: sessionId });
  }
  saveCapabilities(fingerprint: string, snapshot: unknown): void {
    this.services.save(fingerprint, snapshot);
    this.log.push({ kind: "capabilities", data: fingerprint });
  }

  eventsOf(type: string): Array<Record<string, unknown>> {
    return this.events.filter((e) => e.type === type).map((e) => e.payload);
  }

  /** Live pids of every process this task's containment sets still hold. */
  async survivors(): Promise<number[]> {
    const all: number[] = [];
    for (const p of this.procs) all.push(...(await p.members()));
    return all;
  }
}

export interface Rig {
  dir: string;
  stateDir: string;
  tmpRoot: string;
  services: MemoryCapabilities;
  diagnostics: RecordingDiagnostics;
  /** Provider env file applied to the next tasks' environment (as the Bridge does at start). */
  providerEnvFile: string | null;
  adapter(profile: AcpProfile, agent?: ReturnType<typeof agentConfig>): AcpAdapter;
  task(prompt: string, opts?: ConstructorParameters<typeof TestTask>[3]): TestTask;
  cleanup(): void;
}

export function makeRig(): Rig {
  const base = tempDir("serverfs-acp-");
  const dir = path.join(base, "workdir");
  const stateDir = path.join(base, "fixture-state");
  const tmpRoot = path.join(base, "state", "tmp");
  fs.mkdirSync(dir);
  fs.mkdirSync(stateDir);
  const services = new MemoryCapabilities();
  const diagnostics = new RecordingDiagnostics();
  const rig: Rig = {
    dir,
    stateDir,
    tmpRoot,
    services,
    diagnostics,
    providerEnvFile: null,
    adapter: (profile, agent = agentConfig()) => new AcpAdapter({ profile, agent, tmpRoot, services, diagnostics }),
    task: (prompt, opts) => new TestTask(dir, prompt, services, opts, providerEnvironment(rig.providerEnvFile).env),
    cleanup: () => fs.rmSync(base, { recursive: true, force: true }),
  };
  return rig;
}

/** Run and capture either the result or the coded error. */
export async function outcome(p: Promise<AdapterResult>): Promise<{ result?: AdapterResult; code?: string; message?: string }> {
  try {
    return { result: await p };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { code: e.code ?? "NOT_A_SERVERFS_ERROR", message: e.message ?? String(err) };
  }
}
