// Workdirs that overlap: one root is the other, or lies inside it (by path, through a symlink, a
// bind mount or a case-folded spelling: platform/fs/dir-overlap.ts). Two such aliases reach the
// same files under two writer leases, so neither lease keeps the other's writer out.
// `render-config` and `doctor` warn about every such pair; the Bridge refuses to start when both
// workdirs of a pair allow agent tasks (src/commands/bridge.ts).
// Messages name aliases and configuration keys, never a root path.
import { directoryFacts, directoryOverlap, type OverlapBasis } from "../../platform/fs/dir-overlap.ts";
import { ServerfsError } from "../errors.ts";
import type { KeyNamer } from "./problems.ts";
import type { Registry, Workdir } from "./types.ts";

export interface OverlapSide {
  alias: string;
  /** The key of its root (`workdirs[1].path`, `WORKDIR_02_PATH`, `#2.path`). */
  key: string;
  /** The key that turns its agent tasks off. */
  modeKey: string;
  agent: boolean;
}

export interface WorkdirOverlap {
  /** The containing workdir (for "same", the one listed first). */
  outer: OverlapSide;
  inner: OverlapSide;
  kind: "same" | "inside";
  basis: OverlapBasis;
}

const HOW: Record<OverlapBasis, string> = {
  path: "by path",
  "real path": "through a symlink",
  "case-insensitive spelling": "spelled differently on a case-insensitive filesystem",
  "device and inode": "the same directory by device and inode (a bind mount or another mount of it)",
};

function agentEnabled(w: Workdir): boolean {
  return w.agent_mode !== "disabled";
}

/** Every overlapping pair, in configuration order. */
export function findWorkdirOverlaps(registry: Registry, keyName: KeyNamer): WorkdirOverlap[] {
  const facts = registry.workdirs.map((w) => directoryFacts(w.path));
  const side = (i: number) => {
    const w = registry.workdirs[i]!;
    return { alias: w.alias, key: keyName(["workdirs", i, "path"]), modeKey: keyName(["workdirs", i, "agent_mode"]), agent: agentEnabled(w) };
  };
  const out: WorkdirOverlap[] = [];
  for (let i = 0; i < facts.length; i++) {
    for (let j = i + 1; j < facts.length; j++) {
      const o = directoryOverlap(facts[i]!, facts[j]!);
      if (o === null) continue;
      const [outer, inner] = o.inner === "second" || o.kind === "same" ? [i, j] : [j, i];
      out.push({ outer: side(outer), inner: side(inner), kind: o.kind, basis: o.basis });
    }
  }
  return out;
}

/** "'app2' (workdirs[1].path) is inside 'app' (workdirs[0].path), through a symlink" */
export function describeOverlap(o: WorkdirOverlap): string {
  const inner = `'${o.inner.alias}' (${o.inner.key})`;
  const outer = `'${o.outer.alias}' (${o.outer.key})`;
  const relation = o.kind === "same" ? `and ${outer} are one directory` : `is inside ${outer}`;
  return `${inner} ${relation}, ${HOW[o.basis]}`;
}

export const OVERLAP_FIX = "point one of the two at a directory outside the other, or remove one of them";

/** The one warning line `render-config` prints and `doctor` shows (without its prefix). */
export function overlapWarning(o: WorkdirOverlap): string {
  return `workdirs '${o.outer.alias}' and '${o.inner.alias}' overlap: ${describeOverlap(o)}; the same files are then reachable under two aliases and two writer leases; fix: ${OVERLAP_FIX}`;
}

/**
 * The Bridge's refusal: two agent-enabled workdirs that overlap would let two tasks, each holding
 * its own workdir's writer lease, write the same files.
 */
export function refuseAgentOverlaps(registry: Registry, keyName: KeyNamer, file: string): void {
  const both = findWorkdirOverlaps(registry, keyName).find((o) => o.outer.agent && o.inner.agent);
  if (!both) return;
  throw new ServerfsError(
    "WORKDIR_OVERLAP",
    `${file}: workdirs '${both.outer.alias}' and '${both.inner.alias}' both allow agent tasks and overlap: ${describeOverlap(both)}; two writer leases would guard the same files; fix: ${OVERLAP_FIX}, or set ${both.inner.modeKey} = "disabled"`,
  );
}
