// A real Bridge for tests, assembled by the production wiring (src/bridge/daemon.ts
// wireBridgeService), so a change to how the daemon builds its service reaches every suite. The
// rig drives the service through its RPC dispatch in-process; test/bridge/helpers.ts drives the
// whole daemon (startBridge) over its real socket. Both share the task driver below.
import fs from "node:fs";
import path from "node:path";
import { wireBridgeService, type WiredBridge, type WiringOptions } from "../../src/bridge/daemon.ts";
import type { BridgeService } from "../../src/bridge/service.ts";
import type { TaskStore } from "../../src/bridge/store/tasks.ts";
import type { AgentConfig, Registry } from "../../src/config/types.ts";
import { bridgeRegistry, agentWorkdir } from "./registry.ts";
import { tempDir, removeDir } from "./temp.ts";
import { waitUntil } from "./proc.ts";

export const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

export type Call = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;
export type TaskEvent = { event_type: string; payload: Record<string, unknown> };

/** Calls, coded failures and bounded waits on a task, over any way of reaching the Bridge. */
export interface TaskDriver {
  call: Call;
  /** Call and return the coded error (fails the test if the call succeeds). */
  fail(method: string, params?: Record<string, unknown>): Promise<string>;
  waitFor(taskId: string, pred: (t: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  waitTerminal(taskId: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  events(taskId: string): Promise<TaskEvent[]>;
}

/** `waitForDefaultMs` is the waits' own deadline when a call names none; Infinity leaves the bound to the test's timeout. */
export function taskDriver(call: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>, waitForDefaultMs: number): TaskDriver {
  const d: TaskDriver = {
    call: (method, params = {}) => call(method, params),
    async fail(method, params = {}) {
      try {
        await call(method, params);
      } catch (err) {
        return (err as { code: string }).code;
      }
      throw new Error(`${method} unexpectedly succeeded`);
    },
    // task.get with wait_seconds returns on any change, so this loop does not poll busily.
    async waitFor(taskId, pred, timeoutMs = waitForDefaultMs) {
      const until = Date.now() + timeoutMs;
      for (let first = true; ; first = false) {
        const t = await call("task.get", { task_id: taskId, wait_seconds: first ? 0 : 1 });
        if (pred(t)) return t;
        if (Date.now() > until) throw new Error(`timed out waiting on ${taskId}: ${JSON.stringify(t.status)}`);
      }
    },
    waitTerminal: (taskId, timeoutMs) => d.waitFor(taskId, (t) => TERMINAL.has(t.status as string), timeoutMs),
    async events(taskId) {
      const r = await call("task.events", { task_id: taskId, after_event_id: 0, limit: 500 });
      return r.events as TaskEvent[];
    },
  };
  return d;
}

export interface ServiceRig extends TaskDriver {
  root: string;
  workdir: string;
  registry: Registry;
  service: BridgeService;
  store: TaskStore;
  wired: WiredBridge;
  submit(runtime: string, prompt: string, extra?: Record<string, unknown>): Promise<string>;
  stop(): Promise<void>;
}

export interface ServiceRigOptions {
  tempPrefix: string;
  /** The adapters under test (default: every family the registry enables). */
  adapters?: WiringOptions["adapters"];
  /** The workdir "repo"'s agent_runtimes. */
  runtimes: string[];
  /** The [agent] table over the Bridge suites' defaults (Agent and fake runtime on). */
  agent: Partial<AgentConfig>;
  waitForDefaultMs: number;
  /** Submit only once the workdir's writer lease is free, so tasks run one at a time. */
  oneTaskAtATime: boolean;
  stopGraceMs?: number;
}

/** A started Bridge service over one workdir "repo" in a fresh temp dir, driven in-process. */
export async function startServiceRig(o: ServiceRigOptions): Promise<ServiceRig> {
  const root = tempDir(o.tempPrefix);
  const workdir = path.join(root, "repo");
  fs.mkdirSync(workdir);
  const registry = bridgeRegistry(path.join(root, "state"), [agentWorkdir("repo", workdir, { agent_runtimes: o.runtimes })], o.agent);
  const wired = wireBridgeService(registry, { stopGraceMs: o.stopGraceMs ?? 500, ...(o.adapters ? { adapters: o.adapters } : {}) });
  try {
    await wired.service.start();
  } catch (err) {
    wired.release();
    throw err;
  }
  const driver = taskDriver((method, params) => wired.service.dispatch(method, params), o.waitForDefaultMs);
  return {
    ...driver,
    root,
    workdir,
    registry,
    service: wired.service,
    store: wired.store,
    wired,
    async submit(runtime, prompt, extra = {}) {
      // A cancelled task publishes its terminal state first and releases the writer lease only
      // after its provider's stop is proved.
      if (o.oneTaskAtATime) await waitUntil(() => !wired.leases.isHeld("repo"), 15_000, 50);
      const r = await driver.call("task.submit", { runtime, workdir: "repo", path: "", profile: "workspace-write", prompt, ...extra });
      return r.task_id as string;
    },
    async stop() {
      await wired.close();
      removeDir(root);
    },
  };
}
