// Whether two directories overlap: one is the other, or lies inside it. Spelling is not enough to
// tell, so each directory is looked at four ways, and any one of them finding an overlap is enough:
//   path          the configured spellings, lexically (after `.` and duplicate separators go);
//   real path     both spellings with every symlink resolved (realpath);
//   case          either of those, case-folded, where the outer directory's filesystem was
//                 detected to match names case-insensitively (platform/fs/case-sensitivity.ts);
//   identity      device and inode: the inner directory's real path is walked up to the root, and
//                 an ancestor with the outer directory's device and inode is the outer directory
//                 reached another way (a bind mount, a second mount of the same filesystem
//                 subtree, a case-folded spelling on a filesystem with stable inode numbers).
// A directory that does not exist yet is judged by its nearest existing ancestor for identity
// (what is created below it will lie inside whatever contains that ancestor) and by path.
// Everything here only reads: stat, lstat and realpath.
import fs from "node:fs";
import path from "node:path";
import { detectCaseSensitivity } from "./case-sensitivity.ts";

export type OverlapBasis = "path" | "real path" | "case-insensitive spelling" | "device and inode";

export interface DirectoryFacts {
  /** The spelling as configured, lexically normalised. */
  spelled: string;
  /** Real path of the directory, or of its nearest existing ancestor joined with the rest. */
  real: string;
  /** `dev:ino` of the directory itself; null when it does not exist. */
  identity: string | null;
  /** `dev:ino` of the real path (or nearest existing ancestor) and every ancestor up to the root. */
  lineage: ReadonlySet<string>;
  /** The filesystem at the directory was detected to match names case-insensitively. */
  foldsCase: boolean;
}

export interface DirectoryOverlap {
  /** "same": one directory under two spellings; "inside": `inner` lies below the other. */
  kind: "same" | "inside";
  /** Which of the two arguments is the inner one (for "same", "first"). */
  inner: "first" | "second";
  basis: OverlapBasis;
}

function identityOf(p: string): string | null {
  try {
    const st = fs.statSync(p, { bigint: true });
    return st.isDirectory() ? `${st.dev}:${st.ino}` : null;
  } catch {
    return null;
  }
}

function trimmed(p: string): string {
  const n = path.normalize(p);
  const root = path.parse(n).root;
  return n.length > root.length && (n.endsWith("/") || n.endsWith(path.sep)) ? n.slice(0, -1) : n;
}

/** Facts about one configured directory, gathered once and compared with every other. */
export function directoryFacts(configured: string): DirectoryFacts {
  const spelled = trimmed(configured);
  // The nearest existing ancestor: what a missing directory would be created inside.
  let existing = spelled;
  const missing: string[] = [];
  let real: string | null = null;
  for (;;) {
    try {
      real = fs.realpathSync.native(existing);
      break;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
  }
  const lineage = new Set<string>();
  if (real !== null) {
    for (let cur = real; ; cur = path.dirname(cur)) {
      const id = identityOf(cur);
      if (id !== null) lineage.add(id);
      if (path.dirname(cur) === cur) break;
    }
  }
  const exists = missing.length === 0 && real !== null;
  return {
    spelled,
    real: real === null ? spelled : path.join(real, ...missing),
    identity: exists ? identityOf(real!) : null,
    lineage,
    foldsCase: exists && detectCaseSensitivity(real!).basis === "detected-insensitive",
  };
}

/** `inner` is `outer` or below it, comparing path components (case-folded when asked). */
function lexicallyWithin(inner: string, outer: string, fold: boolean): "same" | "inside" | null {
  const a = fold ? inner.toLowerCase() : inner;
  const b = fold ? outer.toLowerCase() : outer;
  if (a === b) return "same";
  const prefix = b.endsWith(path.sep) || b.endsWith("/") ? b : `${b}${path.sep}`;
  return a.startsWith(prefix) ? "inside" : null;
}

/** `inner` is `outer`, or lies inside it, by any of the four ways above. */
function within(inner: DirectoryFacts, outer: DirectoryFacts): { kind: "same" | "inside"; basis: OverlapBasis } | null {
  const bySpelling = lexicallyWithin(inner.spelled, outer.spelled, false);
  if (bySpelling) return { kind: bySpelling, basis: "path" };
  const byReal = lexicallyWithin(inner.real, outer.real, false);
  if (byReal) return { kind: byReal, basis: "real path" };
  // Before identity: on a case-folding filesystem this is the explanation an operator recognises.
  if (outer.foldsCase) {
    const folded = lexicallyWithin(inner.spelled, outer.spelled, true) ?? lexicallyWithin(inner.real, outer.real, true);
    if (folded) return { kind: folded, basis: "case-insensitive spelling" };
  }
  if (outer.identity !== null && inner.lineage.has(outer.identity)) {
    return { kind: inner.identity === outer.identity ? "same" : "inside", basis: "device and inode" };
  }
  return null;
}

/** Whether two directories overlap, and how it was found; null when they are disjoint. */
export function directoryOverlap(first: DirectoryFacts, second: DirectoryFacts): DirectoryOverlap | null {
  const secondInFirst = within(second, first);
  if (secondInFirst?.kind === "same") return { kind: "same", inner: "first", basis: secondInFirst.basis };
  const firstInSecond = within(first, second);
  if (firstInSecond) return { kind: firstInSecond.kind, inner: "first", basis: firstInSecond.basis };
  if (secondInFirst) return { kind: "inside", inner: "second", basis: secondInFirst.basis };
  return null;
}
