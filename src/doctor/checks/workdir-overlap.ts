// Workdirs that overlap (src/config/overlap.ts): a WARN per pair, naming both aliases and keys.
// Only with two or more workdirs is there anything to say.
import { describeOverlap, findWorkdirOverlaps, OVERLAP_FIX } from "../../config/overlap.ts";
import type { KeyNamer } from "../../config/problems.ts";
import type { Registry } from "../../config/types.ts";
import { ok, warn, type CheckResult } from "../types.ts";

export function overlapChecks(registry: Registry, keyName: KeyNamer): CheckResult[] {
  if (registry.workdirs.length < 2) return [];
  const overlaps = findWorkdirOverlaps(registry, keyName);
  if (overlaps.length === 0) return [ok("workdirs.overlap", "workdirs overlap", "none: no root is, or lies inside, another")];
  return overlaps.map((o) => {
    const agents = o.outer.agent && o.inner.agent ? "; both allow agent tasks, so the Bridge refuses to start (WORKDIR_OVERLAP)" : "";
    return warn(
      `workdirs.overlap.${o.outer.alias}.${o.inner.alias}`,
      `workdirs ${o.outer.alias} and ${o.inner.alias}`,
      `overlap: ${describeOverlap(o)}; the same files are reachable under two aliases and two writer leases${agents}`,
      `to fix it, ${OVERLAP_FIX}`,
    );
  });
}
