// The real Bridge service (store, leases, guard, events, interactions, redaction, containment)
// with the runtime families under test registered, assembled the way src/bridge/daemon.ts
// assembles it and driven through its RPC dispatch: the ACP and native suites use the same core,
// which proves it needs no runtime-specific changes. Plus the process checks those suites share.
import { expect } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { containment, leases } from "../../platform/index.ts";
import { bridgePaths } from "../../src/bridge/deployment.ts";
import { ensurePrivateDir, LeaseManager } from "../../src/bridge/lease.ts";
import { providerEnvironment } from "../../src/bridge/provider-env.ts";
import { BridgeService } from "../../src/bridge/service.ts";
import { openStateDatabase } from "../../src/bridge/store/db.ts";
import { TaskStore } from "../../src/bridge/store/tasks.ts";
import { DEFAULT_LIMITS, DEFAULT_POLICY } from "../../src/config/defaults.ts";
import type { AcpProfile, AgentConfig, Registry } from "../../src/config/types.ts";
import { acpRuntimeFamily } from "../../src/runtimes/acp/index.ts";
import type { Diagnostics } from "../../src/runtimes/kernel/turn-support.ts";
import type { RuntimeAdapter, RuntimeServices } from "../../src/runtimes/types.ts";

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

export function tempDir(prefix: string): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export class RecordingDiagnostics implements Diagnostics {
  readonly records: Array<{ kind: string; fields: Record<string, unknown> }> = [];
  record(kind: string, fields: Record<string, string | number | boolean | null>): void {
    this.records.push({ kind, fields });
  }
}

/** The [agent] settings these suites start from: the Agent on, every runtime off, no proxy. */
export function testAgentConfig(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    enabled: true,
    enable_fake_runtime: false,
    bridge_timeout_seconds: 30,
    task_timeout_seconds: 600,
    interaction_timeout_seconds: 600,
    max_active_tasks: 4,
    retention_seconds: 604_800,
    result_spool_threshold_bytes: 262_144,
    approvals: "auto",
    event_idle_timeout_seconds: null,
    provider_env_file: null,
    codex: { enabled: false, bin: "codex", use_proxy: false },
    claude: { enabled: false, bin: "claude", use_proxy: false },
    qoder: { enabled: false, bin: "qodercli", use_proxy: false },
    proxy: { enabled: false, url: null, no_proxy: ["127.0.0.1", "localhost", "::1"] },
    acp_profiles: [],
    ...overrides,
  };
}

export type Family = (registry: Registry, services: (runtime: string) => RuntimeServices, options: unknown, diagnostics: RecordingDiagnostics) => RuntimeAdapter[];

export interface ServiceRig {
  root: string;
  workdir: string;
  registry: Registry;
  service: BridgeService;
  store: TaskStore;
  diagnostics: RecordingDiagnostics;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  fail(method: string, params?: Record<string, unknown>): Promise<string>;
  submit(runtime: string, prompt: string, extra?: Record<string, unknown>): Promise<string>;
  waitFor(taskId: string, pred: (t: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  waitTerminal(taskId: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  events(taskId: string): Promise<Array<{ event_type: string; payload: Record<string, unknown> }>>;
  stop(): Promise<void>;
}

interface RigOptions {
  tempPrefix: string;
  family: Family;
  /** The workdir's agent_runtimes. */
  runtimes: string[];
  agent: Partial<AgentConfig>;
  waitForDefaultMs: number;
  /** Submit only once the workdir's writer lease is free, so tasks run one at a time. */
  oneTaskAtATime: boolean;
}

async function startServiceRig(o: RigOptions): Promise<ServiceRig> {
  const root = tempDir(o.tempPrefix);
  const workdir = path.join(root, "repo");
  fs.mkdirSync(workdir);
  const registry: Registry = {
    server: { log_level: "INFO", state_dir: path.join(root, "state") },
    limits: { ...DEFAULT_LIMITS },
    workdirs: [
      {
        ...DEFAULT_POLICY,
        extra_deny_globs: [],
        alias: "repo",
        path: workdir,
        description: null,
        read_only: false,
        agent_mode: "workspace-write",
        agent_runtimes: o.runtimes,
      },
    ],
    agent: testAgentConfig(o.agent),
  };
  const paths = bridgePaths(registry);
  ensurePrivateDir(paths.stateDir, "STATE_DIRECTORY_UNSAFE");
  ensurePrivateDir(paths.spoolDir, "STATE_DIRECTORY_UNSAFE");
  const db = openStateDatabase(paths.dbPath);
  const store = new TaskStore(db);
  const leaseManager = new LeaseManager(registry, leases());
  leaseManager.precreate();
  const diagnostics = new RecordingDiagnostics();
  const services = (runtime: string): RuntimeServices => ({ loadCapabilities: (fp) => store.getCapabilities(runtime, fp) });
  const adapters = new Map(o.family(registry, services, {}, diagnostics).map((a) => [a.name, a]));
  const providerEnv = providerEnvironment(registry.agent.provider_env_file);
  const service = new BridgeService({
    registry,
    paths,
    store,
    leases: leaseManager,
    containment: containment(),
    adapters,
    providerEnv: providerEnv.env,
    secrets: providerEnv.secrets,
    stopGraceMs: 500,
  });
  await service.start();
  const rig: ServiceRig = {
    root,
    workdir,
    registry,
    service,
    store,
    diagnostics,
    call: (method, params = {}) => service.dispatch(method, params),
    async fail(method, params = {}) {
      try {
        await service.dispatch(method, params);
      } catch (err) {
        return (err as { code: string }).code;
      }
      throw new Error(`${method} unexpectedly succeeded`);
    },
    async submit(runtime, prompt, extra = {}) {
      // A cancelled task publishes its terminal state first and releases the writer lease only
      // after its provider's stop is proved.
      if (o.oneTaskAtATime) await waitUntil(() => !leaseManager.isHeld("repo"), 15_000);
      const r = await service.dispatch("task.submit", { runtime, workdir: "repo", path: "", profile: "workspace-write", prompt, ...extra });
      return r.task_id as string;
    },
    async waitFor(taskId, pred, timeoutMs = o.waitForDefaultMs) {
      const until = Date.now() + timeoutMs;
      for (let first = true; ; first = false) {
        const t = await service.dispatch("task.get", { task_id: taskId, wait_seconds: first ? 0 : 1 });
        if (pred(t)) return t;
        if (Date.now() > until) throw new Error(`timed out waiting on ${taskId}: ${JSON.stringify(t.status)}`);
      }
    },
    waitTerminal: (taskId, timeoutMs) => rig.waitFor(taskId, (t) => TERMINAL.has(t.status as string), timeoutMs),
    async events(taskId) {
      const r = await service.dispatch("task.events", { task_id: taskId, after_event_id: 0, limit: 500 });
      return r.events as Array<{ event_type: string; payload: Record<string, unknown> }>;
    },
    async stop() {
      await service.close();
      db.close();
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
  return rig;
}

/** The ACP runtime family with these profiles, each one allowed on the workdir. */
export function startAcpRig(profiles: AcpProfile[], agent: Partial<AgentConfig> = {}): Promise<ServiceRig> {
  return startServiceRig({
    tempPrefix: "serverfs-acp-bridge-",
    family: acpRuntimeFamily,
    runtimes: profiles.map((p) => p.runtime),
    agent: { acp_profiles: profiles, ...agent },
    waitForDefaultMs: 20_000,
    oneTaskAtATime: false,
  });
}

/** One native runtime family (Codex, Claude, Qoder); its tasks run one at a time. */
export function startNativeRig(family: Family, runtimes: string[], agent: Partial<AgentConfig>): Promise<ServiceRig> {
  return startServiceRig({ tempPrefix: "serverfs-native-bridge-", family, runtimes, agent, waitForDefaultMs: 30_000, oneTaskAtATime: true });
}

export type Pending = { request_id: string; kind: string; payload: Record<string, unknown> };

/** Wait until the task asks a human (`status`), failing the test if it ended or erred instead. */
export async function waitInteraction(rig: ServiceRig, id: string, status: string, timeoutMs: number): Promise<Pending> {
  const t = await rig.waitFor(id, (v) => v.status === status || ["failed", "succeeded", "cancelled", "interrupted"].includes(v.status as string), timeoutMs);
  expect({ status: t.status, error: t.error_code }).toEqual({ status, error: null });
  return t.pending_request as Pending;
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie is dead for our purposes; only Linux's /proc shows one.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return process.platform !== "linux";
  }
}

/** Every live process (via /proc) whose environment carries HOME=<home>: the provider, its tools, their children. */
export function processesWithHome(home: string): Array<{ pid: number; cmd: string }> {
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = fs.readFileSync(`/proc/${entry}/environ`, "utf8");
      if (!env.split("\0").includes(`HOME=${home}`) || !pidAlive(Number(entry))) continue;
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      out.push({ pid: Number(entry), cmd });
    } catch {
      // gone or not ours
    }
  }
  return out;
}

export async function waitUntil(pred: () => boolean, timeoutMs: number, stepMs = 50): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (pred()) return true;
    await Bun.sleep(stepMs);
  }
  return pred();
}

/** A 0600 provider env file (the way an operator hands provider settings to the Bridge). */
export function writeProviderEnv(file: string, vars: Record<string, string>): void {
  fs.writeFileSync(file, `${Object.entries(vars).map(([k, v]) => `${k}=${v}`).join("\n")}\n`, { mode: 0o600 });
}
