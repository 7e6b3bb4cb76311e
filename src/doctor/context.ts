// Everything the checks share: the loaded registry, the derived deployment paths, who we are,
// and facts one check measures for later ones (what the Bridge said, the state database copy).
// Nothing here creates or changes a file in the deployment.
import { bridgePaths, type BridgePaths } from "../bridge/deployment.ts";
import type { Registry, RegistrySource } from "../config/types.ts";
import type { BridgeClient } from "../bridge/ipc/client.ts";
import { openStateSnapshot, type SnapshotOutcome } from "./state-db.ts";

export interface DoctorOptions {
  probeAcp: boolean;
}

/** What the Bridge check found, for the recovery-guard check. */
export type BridgeObservation =
  | { state: "not-checked" }
  | { state: "down" }
  | { state: "stale" }
  | { state: "unsafe" }
  | { state: "unresponsive" }
  | { state: "up"; version: string | null; pid: number | null; call: BridgeClient["call"] };

export class DoctorContext {
  readonly paths: BridgePaths;
  readonly uid: number | null;
  bridge: BridgeObservation = { state: "not-checked" };
  private snapshot: SnapshotOutcome | null = null;

  constructor(
    readonly registry: Registry,
    readonly source: RegistrySource,
    readonly options: DoctorOptions,
  ) {
    this.paths = bridgePaths(registry);
    this.uid = typeof process.getuid === "function" ? process.getuid() : null;
  }

  /** The state database, read once through a private copy (see state-db.ts). */
  stateDatabase(): SnapshotOutcome {
    this.snapshot ??= openStateSnapshot(this.paths.dbPath);
    return this.snapshot;
  }

  close(): void {
    if (this.snapshot?.kind === "ok") this.snapshot.snapshot.close();
  }
}
