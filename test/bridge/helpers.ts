// The Bridge suites' harness: the whole daemon (startBridge, the production wiring) on a real
// unix socket in a temp state dir, a client for it, and the fake runtime's turn log. Generic
// helpers live in test/support/ and are re-exported here under the names these suites use.
import { Database } from "bun:sqlite";
import fs from "node:fs";
import path from "node:path";
import { loadRegistry } from "../../src/config/load.ts";
import type { AgentConfig, Registry, Workdir } from "../../src/config/types.ts";
import { startBridge, type RunningBridge } from "../../src/bridge/daemon.ts";
import { RawBridgeClient as BridgeClient } from "../../src/bridge/ipc/client.ts";
import type { BridgeLimits } from "../../src/bridge/limits.ts";
import type { Containment } from "../../platform/types.ts";
import { taskDriver, type TaskDriver } from "../support/bridge-rig.ts";
import { agentWorkdir, bridgeRegistry } from "../support/registry.ts";
import { removeDir, tempDir as supportTempDir } from "../support/temp.ts";
import type { Collection } from "../../src/common/heap-collector.ts";

export { pidAlive } from "../support/proc.ts";
export { removeDir as cleanup } from "../support/temp.ts";

/** The Bridge suites' temp dirs keep a short prefix: socket paths have a length limit. */
export const tempDir = (prefix = "sfs-bridge-"): string => supportTempDir(prefix);
export { agentWorkdir as makeWorkdir, bridgeRegistry as makeRegistry } from "../support/registry.ts";

export interface Harness extends TaskDriver {
  root: string;
  stateDir: string;
  /** `<root>/serverfs.toml`: written only with the `toml` option. */
  configPath: string;
  workdirs: Record<string, string>;
  registry: Registry;
  bridge: RunningBridge;
  client: BridgeClient;
  turnLog: string;
  submit(prompt: string, extra?: Record<string, unknown>): Promise<string>;
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
  /** The Bridge's heap collection after finished tasks (default: the real one). */
  collectHeap?: (kind: Collection) => void;
  /**
   * Load the Bridge's registry from this TOML (written to `<root>/serverfs.toml`), so a serve
   * started on the same file runs the same configuration (src/config/bridge-identity.ts).
   */
  toml?: (layout: { root: string; stateDir: string; workdirs: Record<string, string> }) => string;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const root = opts.reuse?.root ?? tempDir();
  const stateDir = opts.reuse?.stateDir ?? path.join(root, "state");
  const aliases = opts.aliases ?? ["repo"];
  const workdirs: Record<string, string> = {};
  for (const a of aliases) {
    workdirs[a] = path.join(root, a);
    fs.mkdirSync(workdirs[a]!, { recursive: true });
  }
  const configPath = path.join(root, "serverfs.toml");
  let registry: Registry;
  if (opts.toml) {
    fs.writeFileSync(configPath, opts.toml({ root, stateDir, workdirs }));
    registry = (await loadRegistry({ configFile: configPath })).registry;
  } else {
    registry = bridgeRegistry(
      stateDir,
      aliases.map((a) => agentWorkdir(a, workdirs[a]!, opts.workdir)),
      opts.agent,
    );
  }
  const turnLog = path.join(root, "turns.log");
  const bridge = await startBridge({
    registry,
    fakeTurnLog: turnLog,
    stopGraceMs: 500,
    ...(opts.limits ? { limits: opts.limits } : {}),
    ...(opts.containment ? { containment: opts.containment } : {}),
    ...(opts.collectHeap ? { collectHeap: opts.collectHeap } : {}),
  });
  const client = new BridgeClient({ path: bridge.paths.socketPath }, 60_000);
  // no default deadline on waits: how long a task takes is the machine's business (the test's timeout bounds it)
  const driver = taskDriver((method, params) => client.call(method, params), Number.POSITIVE_INFINITY);
  return {
    ...driver,
    root,
    stateDir,
    configPath,
    workdirs,
    registry,
    bridge,
    client,
    turnLog,
    async submit(prompt, extra = {}) {
      const r = await client.call("task.submit", { runtime: "fake", workdir: aliases[0], path: "", profile: "workspace-write", prompt, ...extra });
      return r.task_id as string;
    },
    async stop() {
      await bridge.close();
    },
  };
}

export function turnCount(turnLog: string): number {
  try {
    return fs.readFileSync(turnLog, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** How many task rows the Bridge's database holds, read straight from the file. */
export function taskRows(h: Pick<Harness, "bridge">): number {
  const db = new Database(h.bridge.paths.dbPath, { readonly: true });
  try {
    return (db.query("SELECT COUNT(*) AS n FROM tasks").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Stop the harness's Bridge and remove its whole tree (the end of a file's suite). */
export async function closeHarness(h: Harness | undefined): Promise<void> {
  if (!h) return;
  await h.stop();
  removeDir(h.root);
}
