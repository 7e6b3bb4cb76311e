// Retention (docs/design/task-lifecycle.md): a task is deleted with its events and spool once it
// is terminal, older than retention_seconds, not referenced by a recovery guard and not running.
import { listGuards, readGuard } from "../guard.ts";
import { deleteSpool } from "../spool.ts";
import type { ServiceCore } from "./core.ts";

/** Returns how many tasks were deleted. */
export function collectGarbage(core: ServiceCore): number {
  const cutoff = new Date(Date.now() - core.limits.retention_seconds * 1000).toISOString();
  const candidates = core.store.expiredTerminal(cutoff);
  if (candidates.length === 0) return 0;
  const guarded = new Set<string>();
  for (const g of listGuards(core.deps.paths.guardDir)) {
    const s = readGuard(g);
    if (s.state === "present") guarded.add(s.record.task_id);
  }
  const doomed = candidates.filter((t) => !guarded.has(t.task_id) && !core.active.has(t.task_id));
  core.events.flush();
  core.store.delete(doomed.map((t) => t.task_id));
  for (const t of doomed) {
    if (t.result_storage === "spool") deleteSpool(core.deps.paths.spoolDir, t.task_id);
    core.events.forget(t.task_id);
  }
  return doomed.length;
}
