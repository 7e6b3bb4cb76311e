// Recovery guards (docs/agent-bridge.md, "Recovery required"): a guard file blocks every write to its workdir
// (WORKDIR_RECOVERY_REQUIRED) until the Bridge proves that the provider of the task it names has
// stopped. A guard whose task the running Bridge is still executing is normal; every other guard
// is reported with its task and how to clear it without risking a provider that still writes.
import { listGuards, readGuard, type GuardRecord } from "../../bridge/guard.ts";
import { leaseFiles } from "../../bridge/deployment.ts";
import { ServerfsError } from "../../errors.ts";
import { bridgeCommands } from "../bridge-commands.ts";
import type { DoctorContext } from "../context.ts";
import { fail, ok, warn, type CheckResult } from "../types.ts";
import { IS_LINUX } from "../../../platform/os.ts";

const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

interface TaskFacts {
  status: string;
  runtime: string;
  run_id: string | null;
}

function findProcessesHint(runId: string | null): string {
  if (runId === null) return "make sure no agent process still works in that workdir";
  if (IS_LINUX) {
    return `make sure no process still carries the task's marker (grep -l 'SERVERFS_RUN_ID=${runId}' /proc/[0-9]*/environ prints none; stop any it lists)`;
  }
  return `make sure no process still carries the task's marker SERVERFS_RUN_ID=${runId} (ps eww -ax | grep ${runId}; stop any it lists)`;
}

async function taskFacts(ctx: DoctorContext, taskId: string): Promise<TaskFacts | null | "unknown"> {
  const bridge = ctx.bridge;
  if (bridge.state === "up") {
    try {
      const t = await bridge.call("task.get", { task_id: taskId });
      const db = ctx.stateDatabase();
      const runId = db.kind === "ok" ? (db.snapshot.task(taskId)?.run_id ?? null) : null;
      return { status: String(t.status), runtime: String(t.runtime ?? "?"), run_id: runId };
    } catch (err) {
      if (err instanceof ServerfsError && err.code === "AGENT_TASK_NOT_FOUND") return null;
      // fall through to the database copy
    }
  }
  const db = ctx.stateDatabase();
  if (db.kind !== "ok") return "unknown";
  const row = db.snapshot.task(taskId);
  return row === null ? null : { status: row.status, runtime: row.runtime, run_id: row.run_id };
}

async function judge(ctx: DoctorContext, alias: string, guardFile: string, record: GuardRecord): Promise<CheckResult> {
  const id = `bridge.recovery.${alias}`;
  const label = `workdir ${alias} recovery guard`;
  const facts = await taskFacts(ctx, record.task_id);
  const bridgeUp = ctx.bridge.state === "up";
  if (facts === null) {
    return fail(
      id,
      label,
      `WORKDIR_RECOVERY_REQUIRED: guard names task ${record.task_id}, which the state database does not know (orphaned); writes to ${alias} are blocked`,
      `the Bridge can never clear an orphaned guard: ${findProcessesHint(record.run_id ?? null)}, inspect the workdir (e.g. git status), then delete ${guardFile}`,
    );
  }
  if (facts === "unknown") {
    return fail(
      id,
      label,
      `WORKDIR_RECOVERY_REQUIRED: guard of task ${record.task_id} (${record.runtime}); the task's state cannot be read; writes to ${alias} are blocked`,
      `start the Bridge (${bridgeCommands(ctx).start}): it stops leftover processes of the task and removes the guard once their stop is proved`,
    );
  }
  if (bridgeUp && !TERMINAL.has(facts.status)) {
    return ok(id, label, `held by task ${record.task_id} (${facts.runtime}, ${facts.status}); cleared when it ends`);
  }
  const runId = record.run_id ?? facts.run_id;
  const how = bridgeUp
    ? `restart the Bridge (${bridgeCommands(ctx).restart}): at start it stops every leftover process of the task and removes the guard only once their stop is proved. If the guard survives the restart, ${findProcessesHint(runId)}, then restart the Bridge again`
    : `start the Bridge (${bridgeCommands(ctx).start}): at start it stops every leftover process of the task and removes the guard only once their stop is proved. If the guard survives, ${findProcessesHint(runId)}, then restart the Bridge`;
  return fail(
    id,
    label,
    `WORKDIR_RECOVERY_REQUIRED: task ${record.task_id} (${facts.runtime}, ${facts.status}) may still have a live provider; writes to ${alias} are blocked`,
    `${how}. Never delete the guard by hand while a process of that task may still run (docs/agent-bridge.md, "Recovery required")`,
  );
}

export async function recoveryGuardChecks(ctx: DoctorContext): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const known = new Set<string>();
  for (const w of ctx.registry.workdirs) {
    const { guardFile } = leaseFiles(ctx.registry, w.alias);
    known.add(guardFile);
    const g = readGuard(guardFile);
    if (g.state === "absent") continue;
    if (g.state === "unsafe") {
      out.push(
        fail(
          `bridge.recovery.${w.alias}`,
          `workdir ${w.alias} recovery guard`,
          `WORKDIR_RECOVERY_REQUIRED: the guard file is unreadable, not a regular file or not valid; writes to ${w.alias} are blocked`,
          `the Bridge cannot tell which task it belongs to: make sure no agent process still works in ${w.alias}, then delete ${guardFile}`,
        ),
      );
      continue;
    }
    out.push(await judge(ctx, w.alias, guardFile, g.record));
  }
  for (const file of listGuards(ctx.paths.guardDir)) {
    if (known.has(file)) continue;
    const g = readGuard(file);
    const task = g.state === "present" ? ` of task ${g.record.task_id}` : "";
    out.push(
      warn(
        "bridge.recovery.unconfigured",
        "recovery guard",
        `${file}${task} belongs to no configured workdir`,
        "if that workdir was removed from the config on purpose and no agent process works there any more, delete the file",
      ),
    );
  }
  if (out.length === 0) out.push(ok("bridge.recovery", "recovery guards", "none: no workdir is blocked"));
  return out;
}
