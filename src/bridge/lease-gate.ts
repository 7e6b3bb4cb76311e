// The `serve` side of the writer lease (docs/design/lease-and-guard.md): every filesystem mutation in an
// Agent-enabled deployment takes the same lock file the Bridge holds for a workspace-write task,
// and fails closed on a recovery guard. `serve` never creates lock files and never starts the
// Bridge; reads never come here.
import fs from "node:fs";
import { ServerfsError, errnoCode } from "../errors.ts";
import type { Registry, Workdir } from "../config/types.ts";
import type { MutationGate } from "../fs/gate.ts";
import { processMutationGate } from "../fs/gate.ts";
import { leases } from "../../platform/index.ts";
import type { LeaseProvider } from "../../platform/types.ts";
import { leaseFiles } from "./deployment.ts";

function checkExistingLockFile(lockFile: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(lockFile);
  } catch (err) {
    throw new ServerfsError(
      "AGENT_LOCK_UNAVAILABLE",
      errnoCode(err) === "ENOENT" ? "the workdir lock is missing (start the Agent Bridge once)" : "the workdir lock cannot be inspected",
    );
  }
  if (!st.isFile()) throw new ServerfsError("AGENT_LOCK_UNAVAILABLE", "the workdir lock is not a regular file");
}

function checkGuard(guardFile: string, alias: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(guardFile);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return;
    throw new ServerfsError("AGENT_LOCK_UNAVAILABLE", "the workdir recovery state cannot be inspected");
  }
  if (!st.isFile()) throw new ServerfsError("AGENT_LOCK_UNAVAILABLE", "the workdir recovery state is not a regular file");
  throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} needs recovery after an agent task; see 'serverfs tasks'`);
}

/**
 * A gate for `serve`: without the Agent Bridge it is the plain in-process mutex; with it, each
 * mutation holds the workdir's lease file and refuses while a recovery guard exists.
 */
export function createLeaseGate(registry: Registry, provider?: LeaseProvider): MutationGate {
  const inProcess = processMutationGate();
  if (!registry.agent.enabled) return inProcess;
  return {
    run<T>(workdir: Workdir, fn: () => Promise<T>): Promise<T> {
      return inProcess.run(workdir, async () => {
        const files = leaseFiles(registry, workdir.alias);
        checkExistingLockFile(files.lockFile);
        const lease = (provider ?? leases()).tryAcquire(files.lockFile);
        if (!lease) throw new ServerfsError("WORKDIR_BUSY", `workdir ${workdir.alias} is busy`);
        try {
          checkGuard(files.guardFile, workdir.alias);
          return await fn();
        } finally {
          lease.release();
        }
      });
    },
  };
}
