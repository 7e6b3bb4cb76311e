// The ignore rules of one walk (docs/tools.md, "Ignore files"). Each directory the walk opens
// has its `.gitignore` and `.ignore` read once and compiled into one IgnoreRules (./rules.ts);
// a directory without either shares its parent's level. An entry is judged by the deepest level
// first, up to the workdir root, then by `.git/info/exclude`: the first level that decides wins,
// as in git. An ignored directory is never opened, so nothing below it can be re-included (git's
// rule that a negation cannot bring back a path whose parent directory is excluded).
// Only files inside the workdir are read, each opened beneath the walk's descriptors without
// following a symlink, at most MAX_IGNORE_FILE_BYTES of it; a file that cannot be read, is too
// large or holds too many patterns is used as far as it is valid and named in `warnings`,
// never failing the walk. An ignore file whose path the policy denies is not read at all.

import fs from "node:fs";
import { errnoCode } from "../../errors.ts";
import type { FsNative } from "../../../platform/fs/native.ts";
import type { PathPolicy } from "../policy.ts";
import { MAX_IGNORE_FILE_BYTES, MAX_IGNORE_PATTERNS, parseIgnoreText, type IgnorePattern } from "./parse.ts";
import { IGNORE, IgnoreRules, UNDECIDED } from "./rules.ts";

/** Per directory, in increasing precedence: `.ignore` (ripgrep's convention) outranks `.gitignore`. */
export const IGNORE_FILE_NAMES = [".gitignore", ".ignore"] as const;
/** The ignore file name that sorts last: a sorted listing holds none of them past it. */
const LAST_IGNORE_NAME = ".ignore";
const EXCLUDE_PARTS = [".git", "info", "exclude"];
/** Warnings kept per answer; the rest are counted in one last line. */
const MAX_WARNINGS = 20;

export interface IgnoreLevel {
  readonly parent: IgnoreLevel | null;
  /** Workdir-relative directory the rules are relative to ("" for the root and info/exclude). */
  readonly base: string;
  readonly rules: IgnoreRules;
  /** What `rules` was compiled from: a level crosses to another thread as these (./level-wire.ts). */
  readonly patterns: readonly IgnorePattern[];
}

/** What the rules say of a name whose kind is not known yet (a listing's filter). */
export type NameVerdict = "ignored" | "kept" | "depends";

export class WalkIgnore {
  /** Entries the rules left out (files, directories and others alike; nothing below an ignored directory is seen). */
  ignored = 0;
  private readonly notes: string[] = [];
  private moreNotes = 0;

  constructor(
    private readonly native: FsNative,
    private readonly rootFd: number,
    private readonly policy: PathPolicy,
    /** The walk's RESOURCE_EXHAUSTED: running out of descriptors is never "skip this file". */
    private readonly exhausted: () => Error,
  ) {}

  /** Warnings about ignore files that were cut, dropped patterns or could not be read. */
  warnings(): string[] {
    return this.moreNotes === 0 ? [...this.notes] : [...this.notes, `… and ${this.moreNotes} more ignore-file warnings`];
  }

  /** Warnings raised so far, those past MAX_WARNINGS included (a worker's walk marks where each arose). */
  get warned(): number {
    return this.notes.length + this.moreNotes;
  }

  /**
   * A warning another thread's walk raised, in walk order: its text, or null for one past that
   * walk's own MAX_WARNINGS, which this walk can only count (it is past its cap too).
   */
  absorbWarning(text: string | null): void {
    if (text === null) this.moreNotes++;
    else this.warn(text);
  }

  /** The texts kept so far, without the "and N more" line. */
  keptWarnings(): readonly string[] {
    return this.notes;
  }

  private warn(text: string): void {
    if (this.notes.length < MAX_WARNINGS) this.notes.push(text);
    else this.moreNotes++;
  }

  /**
   * The levels in force above a walk root: `.git/info/exclude` (when the workdir root holds a
   * `.git` directory) and the ignore files of every directory from the workdir root down to the
   * walk root's parent. `insideIgnored`: one of those directories (or the walk root) is itself
   * ignored by the levels above it.
   */
  start(parts: readonly string[]): { level: IgnoreLevel | null; insideIgnored: boolean } {
    let level: IgnoreLevel | null = null;
    const exclude = this.readFile(this.rootFd, EXCLUDE_PARTS, EXCLUDE_PARTS.join("/"));
    if (exclude !== null) level = { parent: null, base: "", rules: new IgnoreRules(exclude, this.policy.caseInsensitive), patterns: exclude };
    let insideIgnored = false;
    let rel = "";
    for (let k = 0; k < parts.length; k++) {
      level = this.load(level, this.rootFd, parts.slice(0, k), rel);
      const name = parts[k] as string;
      if (!insideIgnored && this.isIgnored(level, rel, name, true)) insideIgnored = true;
      rel = rel === "" ? name : `${rel}/${name}`;
    }
    return { level, insideIgnored };
  }

  /** The level of a directory the walk has just opened (`dirFd`), from its parent's. */
  enter(parent: IgnoreLevel | null, dirFd: number, rel: string): IgnoreLevel | null {
    return this.load(parent, dirFd, [], rel);
  }

  /**
   * enter() for a directory whose entries the walk has read (`entries`, in name order, the
   * `budget` smallest): only the ignore files it holds are opened, so the thousands of
   * directories without one cost no failed open each (an exception per miss made a 200,000-entry
   * find_files ~40 % dearer). When the read was cut at the budget, a name sorting after the last
   * kept entry may still exist and is tried.
   */
  enterRead(parent: IgnoreLevel | null, dirFd: number, rel: string, entries: readonly { name: string }[], budget: number): IgnoreLevel | null {
    let want: string[] | null = null;
    for (const e of entries) {
      if (e.name > LAST_IGNORE_NAME) break;
      if (e.name === ".gitignore" || e.name === ".ignore") (want ??= []).push(e.name);
    }
    if (entries.length >= budget) {
      const last = entries[entries.length - 1]?.name ?? "";
      for (const name of IGNORE_FILE_NAMES) if (name > last) (want ??= []).push(name);
    }
    return want === null ? parent : this.load(parent, dirFd, [], rel, want);
  }

  private load(parent: IgnoreLevel | null, dirFd: number, dirParts: readonly string[], rel: string, names: readonly string[] = IGNORE_FILE_NAMES): IgnoreLevel | null {
    const patterns: IgnorePattern[] = [];
    for (const name of names) {
      const shown = rel === "" ? name : `${rel}/${name}`;
      const got = this.readFile(dirFd, [...dirParts, name], shown);
      if (got !== null) patterns.push(...got);
    }
    if (patterns.length === 0) return parent;
    return { parent, base: rel, rules: new IgnoreRules(patterns, this.policy.caseInsensitive), patterns };
  }

  /** One ignore file's patterns; null when it does not exist or cannot be used at all. */
  private readFile(dirFd: number, parts: readonly string[], shown: string): IgnorePattern[] | null {
    if (this.policy.isDenied(shown.split("/"))) return null;
    let fd: number;
    try {
      fd = this.native.openBeneath(dirFd, parts, "read");
    } catch (err) {
      const code = errnoCode(err);
      if (code === "EMFILE" || code === "ENFILE") throw this.exhausted();
      if (code !== "ENOENT" && code !== "ENOTDIR") this.warn(`${shown}: could not be read (${code ?? "error"}); not used`);
      return null;
    }
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) {
        this.warn(`${shown}: not a regular file; not used`);
        return null;
      }
      const want = Math.min(st.size, MAX_IGNORE_FILE_BYTES);
      const buf = Buffer.allocUnsafe(want);
      let got = 0;
      while (got < want) {
        const n = fs.readSync(fd, buf, got, want - got, got);
        if (n === 0) break;
        got += n;
      }
      let text = buf.toString("latin1", 0, got);
      if (st.size > MAX_IGNORE_FILE_BYTES) {
        // the last line may be cut: only whole lines are used
        text = text.slice(0, text.lastIndexOf("\n") + 1);
        this.warn(`${shown}: larger than ${MAX_IGNORE_FILE_BYTES} bytes; only its whole lines within the first ${MAX_IGNORE_FILE_BYTES} bytes were used`);
      }
      const parsed = parseIgnoreText(text);
      if (parsed.dropped > 0) this.warn(`${shown}: more than ${MAX_IGNORE_PATTERNS} patterns; the first ${MAX_IGNORE_PATTERNS} were used, ${parsed.dropped} dropped`);
      return parsed.patterns;
    } catch (err) {
      const code = errnoCode(err);
      if (code === "EMFILE" || code === "ENFILE") throw this.exhausted();
      this.warn(`${shown}: could not be read (${code ?? "error"}); not used`);
      return null;
    } finally {
      this.native.closeFast(fd);
    }
  }

  /** Whether an entry of the directory `dirRel` is ignored; `isDir`: it is a directory. */
  isIgnored(level: IgnoreLevel | null, dirRel: string, name: string, isDir: boolean): boolean {
    let rel: string | null = null;
    for (let l = level; l !== null; l = l.parent) {
      let sub = "";
      if (l.rules.needsPath) {
        rel ??= dirRel === "" ? name : `${dirRel}/${name}`;
        sub = l.base === "" ? rel : rel.slice(l.base.length + 1);
      }
      const d = l.rules.decide(name, sub, isDir);
      if (d !== UNDECIDED) return d === IGNORE;
    }
    return false;
  }

  /** For a filter that sees names only: "depends" when only a directory-only pattern tells. */
  verdict(level: IgnoreLevel | null, dirRel: string, name: string): NameVerdict {
    const asFile = this.isIgnored(level, dirRel, name, false);
    const asDir = this.isIgnored(level, dirRel, name, true);
    if (asFile === asDir) return asFile ? "ignored" : "kept";
    return "depends";
  }
}

