// Shared test fixtures for the Bridge: a Registry built directly (like the loader would), a
// real in-process Bridge on a real unix socket in a temp state dir, and a client for it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_LIMITS, DEFAULT_POLICY } from "../../src/config/defaults.ts";
import type { AgentConfig, Registry, Workdir } from "../../src/config/types.ts";
import { startBridge, type RunningBridge } from "../../src/bridge/daemon.ts";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import type { BridgeLimits } from "../../src/bridge/limits.ts";
import type { Containment } from "../../platform/types.ts";

export function tempDir(prefix = "sfs-bridge-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function makeWorkdir(alias: string, root: string, over: Partial<Workdir> = {}): Workdir {
  return {
    ...DEFAULT_POLICY,
    extra_deny_globs: [],
    alias,
    path: root,
    description: null,
    read_only: false,
    agent_mode: "workspace-write",
    agent_runtimes: ["fake"],
    ...over,
  };
}

export function makeRegistry(stateDir: string, workdirs: Workdir[], agent: Partial<AgentConfig> = {}): Registry {
  return {
    server: { log_level: "INFO", state_dir: stateDir },
    limits: { ...DEFAULT_LIMITS },
    workdirs,
    agent: {
      enabled: true,
      enable_fake_runtime: true,
      bridge_timeout_seconds: 30,
      task_timeout_seconds: 7200,
      interaction_timeout_seconds: 1800,
      max_active_tasks: 4,
      retention_seconds: 604_800,
      result_spool_threshold_bytes: 262_144,
      approvals: "auto",
      event_idle_timeout_seconds: null,
      provider_env_file: null,
      codex: { enabled: false, bin: "codex", use_proxy: true },
      claude: { enabled: false, bin: "claude", use_proxy: false },
      qoder: { enabled: false, bin: "qodercli", use_proxy: false },
      proxy: { enabled: false, url: null, no_proxy: ["127.0.0.1", "localhost", "::1"] },
      acp_profiles: [],
      ...agent,
    },
  };
}

export interface Harness {
  root: string;
  stateDir: string;
  workdirs: Record<string, string>;
  registry: Registry;
  bridge: RunningBridge;
  client: BridgeClient;
  turnLog: string;
  call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Call and return the coded error (fails the test if the call succeeds). */
  fail(method: string, params?: Record<string, unknown>): Promise<string>;
  submit(prompt: string, extra?: Record<string, unknown>): Promise<string>;
  waitFor(taskId: string, pred: (t: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  waitTerminal(taskId: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  aliases?: string[];
  workdir?: Partial<Workdir>;
  agent?: Partial<AgentConfig>;
  limits?: Partial<BridgeLimits>;
  /** Process containment seam (e.g. a process-table reader that fakes a survivor). */
  containment?: Containment;
  /** Reuse an existing state/workdir layout (restart tests). */
  reuse?: { root: string; stateDir: string };
}

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const root = opts.reuse?.root ?? tempDir();
  const stateDir = opts.reuse?.stateDir ?? path.join(root, "state");
  const aliases = opts.aliases ?? ["repo"];
  const workdirs: Record<string, string> = {};
  for (const a of aliases) {
    workdirs[a] = path.join(root, a);
    fs.mkdirSync(workdirs[a]!, { recursive: true });
  }
  const registry = makeRegistry(
    stateDir,
    aliases.map((a) => makeWorkdir(a, workdirs[a]!, opts.workdir)),
    opts.agent,
  );
  const turnLog = path.join(root, "turns.log");
  const bridge = await startBridge({
    registry,
    fakeTurnLog: turnLog,
    stopGraceMs: 500,
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.containment ? { containment: opts.containment } : {}),
  });
  const client = new BridgeClient({ path: bridge.paths.socketPath }, 60_000);
  const h: Harness = {
    root,
    stateDir,
    workdirs,
    registry,
    bridge,
    client,
    turnLog,
    call: (method, params = {}) => client.call(method, params),
    async fail(method, params = {}) {
      try {
        await client.call(method, params);
      } catch (err) {
        return (err as { code: string }).code;
      }
      throw new Error(`${method} unexpectedly succeeded`);
    },
    async submit(prompt, extra = {}) {
      const r = await client.call("task.submit", {
        runtime: "fake",
        workdir: aliases[0],
        path: "",
        profile: "workspace-write",
        prompt,
        ...extra,
      });
      return r.task_id as string;
    },
    async waitFor(taskId, pred, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (let first = true; ; first = false) {
        const t = await client.call("task.get", { task_id: taskId, wait_seconds: first ? 0 : 1 });
        if (pred(t)) return t;
        if (Date.now() > until) throw new Error(`timed out waiting on ${taskId}: ${JSON.stringify(t.status)}`);
      }
    },
    waitTerminal(taskId, timeoutMs) {
      return h.waitFor(taskId, (t) => TERMINAL.has(t.status as string), timeoutMs);
    },
    async stop() {
      await bridge.close();
    },
  };
  return h;
}

export function turnCount(turnLog: string): number {
  try {
    return fs.readFileSync(turnLog, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

export function pidAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export function cleanup(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
