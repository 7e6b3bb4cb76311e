// An ignore level chain as it crosses between threads: find_files hands sub-trees to the search
// worker and takes back the directories a capped unit did not reach (../search/find-units.ts),
// and each carries the rules in force in its parent. A level is an object graph with compiled
// matchers, which a message cannot carry, so it travels as the patterns it was compiled from,
// innermost level first, and is compiled again on the far side: the same patterns under the same
// case rule are the same rules. A message clones each object once however often it is named, so
// an encoder that reuses one wire object per level lets the decoder compile each level once per
// message, not once per directory that names it.
import type { IgnorePattern } from "./parse.ts";
import { IgnoreRules } from "./rules.ts";
import type { IgnoreLevel } from "./walk-ignore.ts";

export interface WireLevel {
  base: string;
  patterns: readonly IgnorePattern[];
}

/** A level chain on the wire: innermost first; [] for none. */
export type WireChain = WireLevel[];

export class LevelEncoder {
  private readonly seen = new Map<IgnoreLevel, WireLevel>();

  chain(level: IgnoreLevel | null): WireChain {
    const out: WireChain = [];
    for (let l = level; l !== null; l = l.parent) {
      let w = this.seen.get(l);
      if (w === undefined) this.seen.set(l, (w = { base: l.base, patterns: l.patterns }));
      out.push(w);
    }
    return out;
  }
}

export class LevelDecoder {
  private readonly compiled = new Map<WireLevel, IgnoreLevel>();

  constructor(private readonly caseInsensitive: boolean) {}

  chain(wire: WireChain): IgnoreLevel | null {
    return this.from(wire, 0);
  }

  private from(wire: WireChain, i: number): IgnoreLevel | null {
    const w = wire[i];
    if (w === undefined) return null;
    let level = this.compiled.get(w);
    if (level === undefined) {
      level = { parent: this.from(wire, i + 1), base: w.base, rules: new IgnoreRules(w.patterns, this.caseInsensitive), patterns: w.patterns };
      this.compiled.set(w, level);
    }
    return level;
  }
}
