// Assembling a running Bridge: private state dir, the one-instance lock, the database, leases,
// adapters, the service start (retention GC + restart reconciliation) and only then the endpoint.
import fs from "node:fs";
import { ServerfsError } from "../errors.ts";
import type { Registry } from "../config/types.ts";
import { containment, ensureBridgeToken, installSpawnJournal, leases, peerCredentials } from "../../platform/index.ts";
import type { Containment, FileLease } from "../../platform/types.ts";
import { select } from "../../platform/os.ts";
import { buildAdapters } from "./adapters.ts";
import { bridgePaths, type BridgePaths } from "./deployment.ts";
import type { SocketBounds } from "./ipc/bounds.ts";
import { listenPosix, type BridgeListener } from "./ipc/server.posix.ts";
import { listenWindowsPipe } from "./ipc/server.windows.ts";
import { ensurePrivateDir, LeaseManager } from "./lease.ts";
import { OutsideRunJournal } from "./outside-runs.ts";
import type { BridgeLimits } from "./limits.ts";
import { providerEnvironment } from "../runtimes/kernel/provider-env.ts";
import type { RuntimeAdapter, RuntimeServices } from "../runtimes/types.ts";
import { BridgeService, type LogFn } from "./service.ts";
import type { Collection } from "../common/heap-collector.ts";
import { openStateDatabase } from "./store/db.ts";
import { TaskStore } from "./store/tasks.ts";

export interface BridgeOptions {
  registry: Registry;
  log?: LogFn;
  limits?: Partial<BridgeLimits>;
  fakeTurnLog?: string | null;
  stopGraceMs?: number;
  /** Test seam: the process containment (default: the platform's). */
  containment?: Containment;
  /** Test seam: the endpoint's connection cap, timeouts and queue cap (defaults: ipc/bounds.ts). */
  socketBounds?: Partial<SocketBounds>;
  /** Test seam: the heap collection after finished tasks (src/common/heap-collector.ts). */
  collectHeap?: (kind: Collection) => void;
}

export interface RunningBridge {
  service: BridgeService;
  listener: BridgeListener;
  paths: BridgePaths;
  reconciled: number;
  close(): Promise<void>;
}

/** What wiring needs besides the registry; the endpoint's bounds belong to `listen`. */
export type WiringOptions = Omit<BridgeOptions, "registry" | "socketBounds"> & {
  /** Test seam: the adapters to run (default: every runtime family the registry enables). */
  adapters?: (registry: Registry, services: (runtime: string) => RuntimeServices) => Map<string, RuntimeAdapter>;
};

/** A wired, not yet started Bridge: `service.start()` and `listen()` are the caller's next steps. */
export interface WiredBridge {
  paths: BridgePaths;
  service: BridgeService;
  store: TaskStore;
  leases: LeaseManager;
  adapters: Map<string, RuntimeAdapter>;
  /** The Bridge's endpoint (unix socket, or the named pipe on Windows), dispatching to `service`. */
  listen(bounds?: Partial<SocketBounds>): Promise<BridgeListener>;
  /** Close the service, then release the journal, the database and the instance lock. */
  close(): Promise<void>;
  /** Release without closing the service (it never started). */
  release(): void;
}

/**
 * The one assembly of a Bridge, used by startBridge and by the test rigs: private state dir, the
 * one-instance lock, the outside-run journal, the database, leases, adapters and the service.
 */
export function wireBridgeService(registry: Registry, opts: WiringOptions = {}): WiredBridge {
  const log = opts.log ?? (() => {});
  if (!registry.agent.enabled) throw new ServerfsError("CONFIGURATION_ERROR", "the Agent Bridge is not enabled ([agent] enabled = false)");
  const paths = bridgePaths(registry);
  ensurePrivateDir(paths.stateDir, "STATE_DIRECTORY_UNSAFE");
  const instance: FileLease | null = (() => {
    const fd = fs.openSync(paths.instanceLock, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o600);
    fs.closeSync(fd);
    return leases().tryAcquire(paths.instanceLock);
  })();
  if (!instance) throw new ServerfsError("BRIDGE_ALREADY_RUNNING", "another Bridge already runs for this state directory");
  let db: ReturnType<typeof openStateDatabase> | null = null;
  let uninstallJournal: (() => void) | null = null;
  const release = () => {
    uninstallJournal?.();
    db?.close();
    instance.release();
  };
  try {
    ensurePrivateDir(paths.spoolDir, "STATE_DIRECTORY_UNSAFE");
    // From here on, every process this Bridge starts outside a task is written down before it exists.
    const outsideRuns = new OutsideRunJournal(paths.outsideRunsDir);
    uninstallJournal = installSpawnJournal(outsideRuns);
    db = openStateDatabase(paths.dbPath);
    const store = new TaskStore(db);
    const leaseManager = new LeaseManager(registry, leases());
    leaseManager.precreate();
    const services = (runtime: string): RuntimeServices => ({ loadCapabilities: (fp) => store.getCapabilities(runtime, fp) });
    const adapters = opts.adapters ? opts.adapters(registry, services) : buildAdapters(registry, services, { fakeTurnLog: opts.fakeTurnLog ?? null });
    const service = new BridgeService({
      registry,
      paths,
      store,
      leases: leaseManager,
      containment: opts.containment ?? containment(),
      adapters,
      ...(() => {
        const pe = providerEnvironment(registry.agent.provider_env_file);
        return { providerEnv: pe.env, secrets: pe.secrets };
      })(),
      log,
      ...(opts.limits ? { limits: opts.limits } : {}),
      ...(opts.stopGraceMs !== undefined ? { stopGraceMs: opts.stopGraceMs } : {}),
      ...(opts.collectHeap ? { collectHeap: opts.collectHeap } : {}),
      outsideRuns,
    });
    const dispatch = (method: string, params: Record<string, unknown>) => service.dispatch(method, params);
    return {
      paths,
      service,
      store,
      leases: leaseManager,
      adapters,
      listen: (bounds = {}) =>
        select({
          windows: () => listenWindowsPipe({ pipePath: paths.socketPath, token: ensureBridgeToken(paths.stateDir), dispatch, log, bounds }),
          other: () => listenPosix({ socketPath: paths.socketPath, dispatch, peerCredentials, log, bounds }),
        }),
      async close() {
        await service.close();
        release();
      },
      release,
    };
  } catch (err) {
    release();
    throw err;
  }
}

export async function startBridge(opts: BridgeOptions): Promise<RunningBridge> {
  const log = opts.log ?? (() => {});
  const wired = wireBridgeService(opts.registry, opts);
  try {
    const { service, paths } = wired;
    const reconciled = await service.start();
    const listener = await wired.listen(opts.socketBounds ?? {});
    log("bridge.listening", { reconciled, runtimes: [...wired.adapters.keys()] });
    let closing: Promise<void> | null = null;
    return {
      service,
      listener,
      paths,
      reconciled,
      close() {
        closing ??= (async () => {
          await listener.close();
          await wired.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    wired.release();
    throw err;
  }
}
