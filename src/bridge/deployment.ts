// Where the Bridge keeps things, derived from the one registry by config/paths.ts, plus the
// guard location that both the Bridge and `serve` compute independently from the lease path.
import path from "node:path";
import { deploymentPaths, leasePath, type DeploymentPaths } from "../config/paths.ts";
import type { Registry } from "../config/types.ts";

export interface BridgePaths extends DeploymentPaths {
  guardDir: string;
  instanceLock: string;
  /** Run ids of processes started outside any task, until their stop is proved (outside-runs.ts). */
  outsideRunsDir: string;
}

export function bridgePaths(registry: Registry): BridgePaths {
  const p = deploymentPaths(registry);
  return {
    ...p,
    guardDir: path.join(p.locksDir, "active"),
    instanceLock: path.join(p.stateDir, "bridge.lock"),
    outsideRunsDir: path.join(p.stateDir, "outside-runs"),
  };
}

export interface WorkdirLeaseFiles {
  lockFile: string;
  guardFile: string;
}

export function leaseFiles(registry: Registry, alias: string): WorkdirLeaseFiles {
  const lockFile = leasePath(registry, alias);
  const stem = path.basename(lockFile).replace(/\.lock$/, "");
  return { lockFile, guardFile: path.join(path.dirname(lockFile), "active", stem) };
}
