// Recovery (docs/design/lease-and-guard.md): at start every task an earlier Bridge left
// non-terminal becomes interrupted (a task is never re-run), leftover guards and outside-task runs
// are swept, and at submit a guard of a task this process does not run blocks unless proved stopped.
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { leaseFiles } from "../deployment.ts";
import { listGuards, readGuard, removeGuard } from "../guard.ts";
import { isTerminal } from "../lifecycle.ts";
import { nowIso, type TaskRow } from "../store/tasks.ts";
import type { ServiceCore } from "./core.ts";

export class Recovery {
  constructor(private readonly core: ServiceCore) {}

  /** Restart reconciliation; returns how many tasks it interrupted. */
  async reconcileAtStart(): Promise<number> {
    const { core } = this;
    let reconciled = 0;
    const handled = new Set<string>();
    for (const task of core.store.nonTerminal()) {
      handled.add(task.task_id);
      reconciled++;
      const adapter = core.deps.adapters.get(task.runtime);
      core.note(task.task_id, "runtime.reconcile_started", { runtime: task.runtime });
      let providerActive: boolean | null = null;
      let status = "UNKNOWN";
      try {
        if (adapter?.reconcile) {
          const r = await adapter.reconcile({
            taskId: task.task_id,
            runId: task.run_id,
            status: task.status,
            nativeSessionId: task.native_session_id,
            nativeTurnId: task.native_turn_id,
            providerStarted: task.provider_started === 1,
          });
          status = r.status;
          providerActive = r.providerActive;
        }
      } catch {
        providerActive = null;
      }
      if (providerActive !== true) providerActive = await this.provedInactive(task);
      core.note(task.task_id, "runtime.reconcile_finished", { runtime: task.runtime, status, provider_active: providerActive });
      const pastDeadline = task.deadline_at !== null && task.deadline_at <= nowIso();
      const code = pastDeadline ? "AGENT_TASK_TIMED_OUT" : "BRIDGE_RESTARTED";
      try {
        core.store.transition(task.task_id, "interrupted", {
          error_code: code,
          error_message: pastDeadline ? "task deadline passed while the Bridge was down" : "the Bridge restarted while the task was active",
        });
      } catch (err) {
        core.log("reconcile.transition_failed", { task_id: task.task_id, code: toServerfsError(err).code });
      }
      core.note(task.task_id, "task.reconciled", { status: "interrupted", provider_active: providerActive, error_code: code });
      if (task.profile === "workspace-write" && providerActive === false) this.removeGuardFor(task.workdir_alias, task.task_id);
    }
    // Guards left behind by tasks that were already terminal (crash between terminal write and removal).
    for (const guardFile of listGuards(core.deps.paths.guardDir)) {
      try {
        const g = readGuard(guardFile);
        if (g.state !== "present" || handled.has(g.record.task_id)) continue;
        const task = core.store.get(g.record.task_id);
        if (!task || !isTerminal(task.status)) continue;
        if ((await this.provedInactive(task)) === false) removeGuard(guardFile, task.task_id);
      } catch {
        // the guard stays: fail closed
      }
    }
    await this.sweepOutsideRuns();
    return reconciled;
  }

  /**
   * Processes an earlier Bridge started outside any task (runtime probes, model discovery) and did
   * not prove stopped — typically because it crashed: sweep their exact run markers; a record is
   * removed only with proof, otherwise it stays for the next start. Never fails the start.
   */
  private async sweepOutsideRuns(): Promise<void> {
    const { core } = this;
    const journal = core.deps.outsideRuns;
    if (!journal) return;
    const leftovers = journal.leftovers();
    if (leftovers.length === 0) return;
    try {
      const r = await core.deps.containment.sweep(
        leftovers.map((l) => l.runId),
        core.stopGraceMs,
      );
      core.log("reconcile.outside_sweep", {
        run_ids: leftovers.length,
        found: r.found,
        method: r.evidence.method,
        proved: r.evidence.proved,
        survivor_pids: r.evidence.survivors.map((s) => s.pid),
      });
      if (r.evidence.proved) journal.remove(leftovers);
    } catch (err) {
      core.log("reconcile.outside_sweep_failed", { run_ids: leftovers.length, code: toServerfsError(err).code });
    }
  }

  /**
   * false when the task's provider is proved gone (never started, or its run marker swept with
   * proof); else null (unknown). The proof is recorded as a `runtime.stop_proof` event.
   */
  private async provedInactive(task: TaskRow): Promise<false | null> {
    const { core } = this;
    if (task.provider_started !== 1) {
      core.note(task.task_id, "runtime.stop_proof", { provider_started: false, proved: true });
      return false;
    }
    if (!task.run_id) return null;
    try {
      const r = await core.deps.containment.sweep([task.run_id], core.stopGraceMs);
      core.log("reconcile.sweep", { task_id: task.task_id, found: r.found, proved: r.evidence.proved });
      core.note(task.task_id, "runtime.stop_proof", {
        provider_started: true,
        swept: r.found,
        method: r.evidence.method,
        survivors: r.evidence.survivors.length,
        proved: r.evidence.proved,
      });
      return r.evidence.proved ? false : null;
    } catch {
      core.note(task.task_id, "runtime.stop_proof", { provider_started: true, proved: false });
      return null;
    }
  }

  private removeGuardFor(alias: string, taskId: string): void {
    try {
      const { guardFile } = leaseFiles(this.core.deps.registry, alias);
      removeGuard(guardFile, taskId);
    } catch (err) {
      this.core.log("guard.remove_failed", { task_id: taskId, code: toServerfsError(err).code });
    }
  }

  /** Lazy reconciliation: a guard left by a task this process does not run blocks unless proved stopped. */
  async lazyReconcile(alias: string, guardFile: string): Promise<void> {
    const { core } = this;
    const g = readGuard(guardFile);
    if (g.state === "absent") return;
    if (g.state === "unsafe") throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} has invalid recovery state`);
    const task = core.store.get(g.record.task_id);
    if (!task || core.active.has(task.task_id)) {
      throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} has orphaned recovery state`);
    }
    core.note(task.task_id, "runtime.reconcile_started", { runtime: task.runtime });
    const inactive = await this.provedInactive(task);
    core.note(task.task_id, "runtime.reconcile_finished", { runtime: task.runtime, status: "UNKNOWN", provider_active: inactive });
    if (inactive !== false) {
      throw new ServerfsError("WORKDIR_RECOVERY_REQUIRED", `workdir ${alias} still has unresolved provider state`);
    }
    if (!isTerminal(task.status)) {
      core.store.transition(task.task_id, "interrupted", {
        error_code: "AGENT_PROVIDER_INACTIVE",
        error_message: "the provider was proved stopped",
      });
      core.note(task.task_id, "task.interrupted", { error_code: "AGENT_PROVIDER_INACTIVE" });
      core.watchers.notify(task.task_id);
    }
    core.note(task.task_id, "task.reconciled", { status: core.store.require(task.task_id).status, provider_active: false });
    removeGuard(guardFile, task.task_id);
  }
}
