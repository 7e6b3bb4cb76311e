// What every part of the Bridge service shares: its dependencies, limits, the event log, the
// long-poll watchers and the runs this process holds. State that matters lives in sqlite; only
// what cannot outlive the process is kept here (docs/design/task-lifecycle.md).
import os from "node:os";
import { bridgeConfigIdentity, bridgeSettingsIdentity } from "../../config/bridge-identity.ts";
import type { Registry } from "../../config/types.ts";
import type { Containment } from "../../../platform/types.ts";
import type { RuntimeAdapter } from "../../runtimes/types.ts";
import { utf8Bytes } from "../../common/utf8.ts";
import type { BridgePaths } from "../deployment.ts";
import type { LeaseManager } from "../lease.ts";
import { bridgeLimits, type BridgeLimits } from "../limits.ts";
import type { OutsideRunJournal } from "../outside-runs.ts";
import { bridgeHostRoots, type HostRoot } from "../../runtimes/kernel/host-roots.ts";
import { Redactor } from "../../runtimes/kernel/redact.ts";
import { EventLog } from "../store/events.ts";
import type { TaskStore } from "../store/tasks.ts";
import { TaskWatchers } from "../watchers.ts";
import type { BridgeEventPayloads, BridgeEventType } from "./events.ts";
import type { Collection } from "../../common/heap-collector.ts";
import type { ActiveRun } from "./active-run.ts";

export type LogFn = (event: string, fields?: Record<string, unknown>) => void;

export interface ServiceDeps {
  registry: Registry;
  paths: BridgePaths;
  store: TaskStore;
  leases: LeaseManager;
  containment: Containment;
  adapters: Map<string, RuntimeAdapter>;
  /** Base environment for provider children (already scrubbed). */
  providerEnv: Record<string, string>;
  /** Literal secrets (provider env file values) redacted from everything a caller can read. */
  secrets?: string[];
  log?: LogFn;
  limits?: Partial<BridgeLimits>;
  /** Grace between TERM and KILL when stopping a provider tree. */
  stopGraceMs?: number;
  /** Run ids started outside any task (probes); leftovers of earlier instances are swept at start. */
  outsideRuns?: OutsideRunJournal;
  /** Test seam: the heap collection after finished tasks (src/common/heap-collector.ts). */
  collectHeap?: (kind: Collection) => void;
}

export class ServiceCore {
  readonly limits: BridgeLimits;
  readonly events: EventLog;
  readonly watchers = new TaskWatchers();
  /** Runs this process holds, by task id. */
  readonly active = new Map<string, ActiveRun>();
  readonly log: LogFn;
  readonly stopGraceMs: number;
  /** What decides where and what agents run, as loaded (src/config/bridge-identity.ts). */
  readonly configIdentity: string;
  /** The rest of [agent] this Bridge applies, as loaded. */
  readonly settingsIdentity: string;
  closed = false;
  /** Home, state, temp and provider config directories, redacted alongside each task's workdir. */
  private readonly hostRoots: HostRoot[];
  /** For caller-visible output outside any task (runtime probes, model catalogs): no workdir. */
  readonly hostRedactor: Redactor;
  private readonly redactors = new Map<string, Redactor>();

  constructor(readonly deps: ServiceDeps) {
    this.limits = bridgeLimits(deps.registry.agent, deps.limits);
    this.log = deps.log ?? (() => {});
    this.stopGraceMs = deps.stopGraceMs ?? 2000;
    this.configIdentity = bridgeConfigIdentity(deps.registry);
    this.settingsIdentity = bridgeSettingsIdentity(deps.registry);
    this.hostRoots = bridgeHostRoots({ paths: deps.paths, envs: [process.env, deps.providerEnv], homedir: os.homedir(), tmpdir: os.tmpdir() });
    this.hostRedactor = new Redactor("", deps.secrets ?? [], this.hostRoots);
    this.events = new EventLog(deps.store.db, this.limits.max_events_per_task);
    deps.store.beforeStatusWrite = () => this.events.flush();
    this.events.alsoWrite = () => deps.store.writePendingCapabilities();
  }

  get store(): TaskStore {
    return this.deps.store;
  }

  /**
   * The one place a task's Redactor is built: its workdir root, the host roots and the provider env's
   * secrets. One per workdir root, shared by its tasks (a Redactor holds no per-task state): each
   * new one compiled its own regular expressions, whose native code stayed resident until a GC.
   * Roots come from the registry, so the cache is bounded by the configured workdirs.
   */
  redactorFor(workdirRoot: string): Redactor {
    let r = this.redactors.get(workdirRoot);
    if (r === undefined) {
      r = new Redactor(workdirRoot, this.deps.secrets ?? [], this.hostRoots);
      this.redactors.set(workdirRoot, r);
    }
    return r;
  }

  /** A Bridge event that must be recorded: a failure (event cap) surfaces to the caller. */
  record<K extends BridgeEventType>(taskId: string, type: K, payload: BridgeEventPayloads[K]): void {
    this.events.append(taskId, type, JSON.stringify(payload));
  }

  /** Bridge bookkeeping: best effort, never fails the caller. */
  note<K extends BridgeEventType>(taskId: string, type: K, payload: BridgeEventPayloads[K]): void {
    try {
      const json = JSON.stringify(payload);
      if (utf8Bytes(json) <= this.limits.max_event_bytes) this.events.append(taskId, type, json);
    } catch {
      // bookkeeping only
    }
  }
}

export function bounded<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(undefined), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      () => {
        clearTimeout(t);
        resolve(undefined);
      },
    );
  });
}
