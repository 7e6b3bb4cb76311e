// One directory level's ignore rules compiled once into one matcher: the patterns of its
// `.gitignore` then its `.ignore` (so `.ignore` wins), or of `.git/info/exclude`, in file order.
// As in git the last matching pattern decides. Literal patterns (most of a real ignore file:
// `node_modules`, `/dist`, `build/`) are looked up in maps; the others are glob NFAs (linear in
// the subject), tried from the last down to the best literal hit, so an entry costs one map
// look-up plus the wildcard patterns that could still outrank it.

import { compileTokens, type GlobMatcher } from "../glob.ts";
import type { IgnorePattern } from "./parse.ts";
import { asciiLower, gitBytes, gitPatternTokens } from "./wildmatch.ts";

/** What a level says about an entry: IGNORE, INCLUDE (a `!` pattern matched) or UNDECIDED. */
export const UNDECIDED = 0;
export const IGNORE = 1;
export const INCLUDE = 2;

interface LiteralHit {
  /** Highest pattern index for any entry kind, and for directories only; -1 for none. */
  any: number;
  dir: number;
}

interface WildRule {
  index: number;
  basename: boolean;
  dirOnly: boolean;
  /** null: git's wildmatch aborts on this pattern, which then never matches. */
  matcher: GlobMatcher | null;
}

function hit(map: Map<string, LiteralHit>, key: string, index: number, dirOnly: boolean): void {
  let h = map.get(key);
  if (h === undefined) map.set(key, (h = { any: -1, dir: -1 }));
  if (dirOnly) h.dir = index;
  else h.any = index;
}

function best(h: LiteralHit | undefined, isDir: boolean): number {
  if (h === undefined) return -1;
  return isDir ? Math.max(h.any, h.dir) : h.any;
}

export class IgnoreRules {
  private readonly negate: boolean[] = [];
  private readonly names = new Map<string, LiteralHit>();
  private readonly paths = new Map<string, LiteralHit>();
  private readonly wild: WildRule[] = [];
  /** Some pattern is matched against the path (it held a `/`): the caller must build it. */
  readonly needsPath: boolean;

  /**
   * `casefold`: match as git does with core.ignorecase (ASCII letters only), for a workdir whose
   * filesystem folds case, where `Node_Modules` and `node_modules` are one name.
   */
  constructor(
    patterns: readonly IgnorePattern[],
    private readonly casefold = false,
  ) {
    let needsPath = false;
    patterns.forEach((p, index) => {
      this.negate.push(p.negate);
      if (!p.basename) needsPath = true;
      if (p.literal !== null) hit(p.basename ? this.names : this.paths, casefold ? asciiLower(p.literal) : p.literal, index, p.dirOnly);
      else {
        const tokens = gitPatternTokens(p.body, casefold);
        this.wild.push({ index, basename: p.basename, dirOnly: p.dirOnly, matcher: tokens === null ? null : compileTokens(tokens) });
      }
    });
    this.needsPath = needsPath;
  }

  get size(): number {
    return this.negate.length;
  }

  /**
   * `name`: the entry's name; `sub`: its path relative to this level's directory (only read when
   * needsPath). Both as the filesystem spells them; converted to bytes here.
   */
  decide(name: string, sub: string, isDir: boolean): number {
    const bName = this.casefold ? asciiLower(gitBytes(name)) : gitBytes(name);
    let top = best(this.names.get(bName), isDir);
    const bSub = this.needsPath ? (this.casefold ? asciiLower(gitBytes(sub)) : gitBytes(sub)) : "";
    if (this.needsPath) top = Math.max(top, best(this.paths.get(bSub), isDir));
    for (let k = this.wild.length - 1; k >= 0; k--) {
      const r = this.wild[k] as WildRule;
      if (r.index < top) break;
      if (r.matcher === null || (r.dirOnly && !isDir)) continue;
      if (r.matcher.test(r.basename ? bName : bSub)) {
        top = r.index;
        break;
      }
    }
    if (top === -1) return UNDECIDED;
    return this.negate[top] ? INCLUDE : IGNORE;
  }
}
