// The bounded selection behind FsNative.readDirSmallest, shared by every backend: of the entries
// a directory listing offers, keep the k smallest in code-point name order, plus a count of all
// that were accepted. Candidates are sorted and cut back to k whenever they reach k + slack, and
// once a cut has happened any name not below the current k-th is dropped on arrival, so memory is
// O(k) however large the directory is, and time O(n log k).

import { edenGC } from "bun:jsc";
import { compareNames, sortByName, sortNames } from "./name-order.ts";
import type { DirEntryInfo, DirSelection, DirSmallest } from "./native-types.ts";

export type { DirSelection, DirSmallest } from "./native-types.ts";

/**
 * Names decoded between collection hints. Every name of a huge directory is a short-lived string
 * (most are refused or cut again), and the collector, which runs by allocation volume relative to
 * the heap, let 300 000 of them lift serve's RSS by ~25 MB before it ran; a hint every this many
 * names keeps that garbage from piling up, and directories smaller than it never pay for one. It is
 * an eden (young-generation) collection: that garbage is all young, and a full one marks the
 * whole heap each time (serve's is large).
 */
const GC_HINT_NAMES = 32_768;

/** Entries offered per step(): the caller's deadline and yield checks run at least this often. */
const OFFERS_PER_STEP = 256;

type Kind = DirEntryInfo["kind"];

/**
 * A DirSmallest over a backend's native listing. `readChunk` hands one chunk of entries to `push`
 * (a kernel buffer's worth, or the whole listing where the platform has no streaming reader) and
 * says whether more may follow; each step() then offers at most OFFERS_PER_STEP of them, so an
 * expensive `accept` (policy globs) is paced too.
 */
export function selectInSteps(k: number, accept: (name: string) => boolean, readChunk: (push: (name: string, kind: Kind) => void) => boolean): DirSmallest {
  const sel = new SmallestEntries(k, accept);
  const names: string[] = [];
  const kinds: Kind[] = [];
  const push = (name: string, kind: Kind) => {
    names.push(name);
    kinds.push(kind);
  };
  let next = 0;
  let more = true;
  return {
    step() {
      if (next === names.length) {
        names.length = 0;
        kinds.length = 0;
        next = 0;
        // a chunk may hold only "." and "..": an empty directory takes no step at all
        while (names.length === 0 && more) more = readChunk(push);
        if (names.length === 0) return false;
      }
      const end = Math.min(names.length, next + OFFERS_PER_STEP);
      for (; next < end; next++) sel.offer(names[next] as string, kinds[next] as Kind);
      return true;
    },
    result: () => sel.result(),
  };
}

export class SmallestEntries {
  /**
   * Candidate names, bare: sorting strings with the engine's own comparison (no comparator call
   * per step) halved the sort, a third of a 200 000-entry find's JavaScript time. Most entries are
   * regular files, so only the others keep their kind, in `others`, matched back by name.
   */
  private names: string[] = [];
  private others: DirEntryInfo[] = [];
  private offered = 0;
  private bound: string | null = null;
  private visible = 0;
  private readonly cutAt: number;

  constructor(
    private readonly k: number,
    /** Accepts or refuses one name (policy filter, mount points); refused names are not counted. */
    private readonly accept: (name: string) => boolean,
  ) {
    // A quarter of k as slack: fewer cuts than that cost more sorting, more slack more memory.
    this.cutAt = k + Math.max(1024, Math.ceil(k / 4));
  }

  offer(name: string, kind: Kind): void {
    if (++this.offered % GC_HINT_NAMES === 0) edenGC();
    if (!this.accept(name)) return;
    this.visible++;
    if (this.k === 0 || (this.bound !== null && compareNames(name, this.bound) >= 0)) return;
    this.names.push(name);
    if (kind !== "file") this.others.push({ name, kind });
    if (this.names.length >= this.cutAt) this.cut();
  }

  private cut(): void {
    sortNames(this.names);
    this.names.length = this.k;
    const bound = this.names[this.k - 1] as string;
    this.bound = bound;
    this.others = this.others.filter((e) => compareNames(e.name, bound) <= 0);
  }

  result(): DirSelection {
    const names = sortNames(this.names);
    if (names.length > this.k) names.length = this.k;
    // the others are a subset of the candidates in the same order: one pass pairs them up
    const others = sortByName(this.others);
    const entries: DirEntryInfo[] = new Array(names.length);
    let j = 0;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const o = others[j];
      if (o !== undefined && o.name === name) {
        entries[i] = o;
        j++;
      } else entries[i] = { name, kind: "file" };
    }
    return { entries, visible: this.visible };
  }
}
