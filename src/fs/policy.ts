// Lexical path policy (no filesystem access): normalisation and confinement, reserved names,
// hidden names, deny rules. One PathPolicy per workdir is shared by every channel, so a path that
// is refused by direct access is also invisible to list, find and search.
//
// Deny semantics (docs/security.md, "What the assistant cannot do"): a glob without `/` is matched (fnmatch) against EVERY component, so `internal` denies `internal/x.py`; a glob with `/` is matched against the
// whole workdir-relative path and against each ancestor prefix, so anything below a denied
// directory is denied too (`docs/*.md`, `secret/**`, `**/build/**`).
//
// On a case-insensitive workdir (docs/security.md, "Case-insensitive filesystems") the same file
// answers to `id_rsa` and `ID_RSA`, so every rule also matches the folded name against the folded
// globs (see ./fold.ts). The exact, unfolded match stays too, so folding can only add refusals.

import type { WorkdirPolicy } from "../config/types.ts";
import { fail } from "./fail.ts";
import { foldGlob, foldName, nfcName } from "./fold.ts";
import { compileFnmatchSet, compilePathGlob, type GlobMatcher } from "./glob.ts";
import { PLATFORM_NAME } from "../../platform/os.ts";
import { requestNameRules } from "../../platform/fs/request-names.ts";

export const RESERVED_TEMP_PREFIX = ".serverfs-tmp-";
export const RESERVED_SENTINEL = ".serverfs-disabled";
export const MAX_PATH_BYTES = 4096;

/** Built-in deny rules; released only by `disable_default_deny`. */
export const DEFAULT_DENY_GLOBS: readonly string[] = [
  ".env",
  ".env.*",
  "*.env",
  "*.pem",
  "*.key",
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  ".ssh",
  ".aws",
  ".gnupg",
  ".kube",
];

/** `caseInsensitive`: also refuse any spelling the filesystem treats as the same name. */
export function isReservedName(name: string, caseInsensitive = false): boolean {
  if (name.startsWith(RESERVED_TEMP_PREFIX) || name === RESERVED_SENTINEL) return true;
  if (!caseInsensitive) return false;
  const f = foldName(name);
  return f.startsWith(RESERVED_TEMP_PREFIX) || f === RESERVED_SENTINEL;
}

export function isHiddenName(name: string): boolean {
  return name.startsWith(".");
}

/**
 * Split a caller path into workdir-relative components. `""`, `"."`, `"./"` and `"sub/.."` are the
 * root (empty list). Backslash is an ordinary character on POSIX; on Windows both `\` and `/`
 * separate components and every component must be a portable Windows name (platform/fs/request-names.ts).
 * `platform` is the host's unless a test asks for the other rules.
 */
export function normalizeRequestPath(workdir: string, raw: string, platform: NodeJS.Platform = PLATFORM_NAME): string[] {
  if (raw.includes("\0")) throw fail("ACCESS_DENIED", workdir, raw, "path contains NUL bytes");
  // The kernel's PATH_MAX: no longer path can be opened, so it is refused before any work on it.
  if (raw.length > MAX_PATH_BYTES || Buffer.byteLength(raw, "utf8") > MAX_PATH_BYTES) {
    throw fail("INVALID_NAME", workdir, raw, `path is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (raw.startsWith("/") || raw.startsWith("~")) throw fail("PATH_OUTSIDE_WORKDIR", workdir, raw);
  const rules = requestNameRules(platform);
  if (rules.rooted(raw)) throw fail("PATH_OUTSIDE_WORKDIR", workdir, raw);
  const parts: string[] = [];
  for (const part of rules.split(raw)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw fail("PATH_OUTSIDE_WORKDIR", workdir, raw);
      parts.pop();
      continue;
    }
    const problem = rules.nameProblem(part);
    if (problem !== null) throw fail("INVALID_NAME", workdir, raw, problem);
    parts.push(part);
  }
  return parts;
}

export interface PathPolicyOptions {
  /**
   * Match as the workdir's filesystem would if it folds case and normalisation. Default true: a
   * policy built without knowing its filesystem takes the safe side (unknown → insensitive).
   */
  caseInsensitive?: boolean;
  /**
   * Case-sensitive, but NFC and NFD spellings name one file (case-sensitive APFS): names and
   * globs are compared in NFC. Implied by `caseInsensitive`.
   */
  normalizationInsensitive?: boolean;
}

interface Rules {
  /** All component globs as one matcher: one test per name on the walk hot path. */
  component: GlobMatcher | null;
  path: GlobMatcher[];
  /** The glob bodies compiled, in order (to tell whether folding changed any). */
  bodies: string[];
}

function compileRules(globs: readonly string[], fold: ((glob: string, isPath: boolean) => string) | null): Rules {
  const component: string[] = [];
  const path: GlobMatcher[] = [];
  const bodies: string[] = [];
  const seen = new Set<string>();
  for (const raw of globs) {
    const trimmed = raw.trim().replace(/^\/+/, "").replace(/\/+$/, "");
    if (trimmed === "") continue;
    const isPath = trimmed.includes("/");
    const body = fold === null ? trimmed : fold(trimmed, isPath);
    if (seen.has(body)) continue;
    seen.add(body);
    bodies.push(body);
    if (isPath) path.push(compilePathGlob(body, true));
    else component.push(body);
  }
  return { component: compileFnmatchSet(component), path, bodies };
}

function pathMatch(rules: readonly GlobMatcher[], rel: string): boolean {
  for (const m of rules) if (m.test(rel)) return true;
  return false;
}

/**
 * Whether a caller path can only name a directory: it ends in `/`, or its last component is `.` or
 * `..`. The kernel refuses to create or replace a file through such a path; normalisation drops
 * the hint, so the tools that create, replace or delete a file ask before normalising.
 */
export function namesDirectory(raw: string, platform: NodeJS.Platform = PLATFORM_NAME): boolean {
  const cut = requestNameRules(platform).lastSeparator(raw);
  const last = raw.slice(cut + 1);
  return raw !== "" && (last === "" || last === "." || last === "..");
}

/** The workdir settings a PathPolicy is built from. */
export type PathPolicyRules = Pick<WorkdirPolicy, "allow_hidden" | "disable_default_deny" | "extra_deny_globs">;

export class PathPolicy {
  /** What this policy was built from, resolved: another thread builds the same policy from it. */
  readonly settings: { rules: PathPolicyRules; options: Required<PathPolicyOptions> };
  readonly allowHidden: boolean;
  readonly caseInsensitive: boolean;
  /** How names are folded before the second test; null: exact matching only. */
  private readonly fold: ((name: string) => string) | null;
  private readonly exact: Rules;
  /** Rules for folded names; null when case-sensitive. */
  private readonly folded: Rules | null;
  /** Folding changed no glob: a name that folds to itself needs only the exact test. */
  private readonly globsFoldToSelf: boolean;
  /** Some deny glob holds a `/`: a path's status then depends on its prefix, not only its names. */
  readonly hasPathRules: boolean;
  // entryVisible is called once per entry of the same directory: fold its path once.
  private lastParent = "";
  private lastParentFolded = "";

  constructor(policy: PathPolicyRules, options: PathPolicyOptions = {}) {
    this.allowHidden = policy.allow_hidden;
    this.caseInsensitive = options.caseInsensitive ?? true;
    this.settings = {
      rules: { allow_hidden: policy.allow_hidden, disable_default_deny: policy.disable_default_deny, extra_deny_globs: [...policy.extra_deny_globs] },
      options: { caseInsensitive: this.caseInsensitive, normalizationInsensitive: options.normalizationInsensitive === true },
    };
    const globs = [...(policy.disable_default_deny ? [] : DEFAULT_DENY_GLOBS), ...policy.extra_deny_globs];
    this.exact = compileRules(globs, null);
    if (this.caseInsensitive) {
      this.fold = foldName;
      this.folded = compileRules(globs, foldGlob);
    } else if (options.normalizationInsensitive) {
      this.fold = nfcName;
      this.folded = compileRules(globs, (g) => g.normalize("NFC"));
    } else {
      this.fold = null;
      this.folded = null;
    }
    const folded = this.folded;
    this.globsFoldToSelf =
      folded === null || (folded.bodies.length === this.exact.bodies.length && folded.bodies.every((b, i) => b === this.exact.bodies[i]));
    this.hasPathRules = this.exact.path.length > 0;
  }

  /** The folded spelling to test as well, or null when the exact test already decides. */
  private foldedOf(s: string): string | null {
    if (this.fold === null) return null;
    const f = this.fold(s);
    return f === s && this.globsFoldToSelf ? null : f;
  }

  private reserved(name: string): boolean {
    return isReservedName(name, this.caseInsensitive);
  }

  /** Deny test for a single name (component rules only). */
  nameDenied(name: string): boolean {
    if (this.exact.component === null) return false;
    if (this.exact.component.test(name)) return true;
    const f = this.foldedOf(name);
    return f !== null && (this.folded?.component?.test(f) ?? false);
  }

  /** Deny test for a full relative path whose ancestors are already known to be allowed. */
  leafPathDenied(rel: string): boolean {
    if (!this.hasPathRules) return false;
    if (pathMatch(this.exact.path, rel)) return true;
    const f = this.foldedOf(rel);
    return f !== null && pathMatch((this.folded as Rules).path, f);
  }

  isDenied(parts: readonly string[]): boolean {
    for (const p of parts) if (this.nameDenied(p)) return true;
    if (this.hasPathRules) {
      let prefix = "";
      for (const p of parts) {
        prefix = prefix === "" ? p : `${prefix}/${p}`;
        if (this.leafPathDenied(prefix)) return true;
      }
    }
    return false;
  }

  /**
   * Whether a directory entry is visible to list/find/search, given that its parent path
   * (`parentRel`, "" for the root) is itself allowed.
   */
  entryVisible(parentRel: string, name: string): boolean {
    const dot = name.charCodeAt(0) === 46; /* . */
    // Both reserved names start with `.`, in every spelling: only those need the reserved test.
    if (dot && this.reserved(name)) return false;
    if (dot && !this.allowHidden) return false;
    const folded = this.folded;
    const fold = this.fold;
    if (folded === null || fold === null) {
      if (this.exact.component !== null && this.exact.component.test(name)) return false;
      return !this.hasPathRules || !pathMatch(this.exact.path, parentRel === "" ? name : `${parentRel}/${name}`);
    }
    // Fold once per entry (and the parent once per directory); the exact tests run first.
    const fname = fold(name);
    const sameName = fname === name && this.globsFoldToSelf;
    if (this.exact.component !== null && (this.exact.component.test(name) || (!sameName && folded.component?.test(fname)))) return false;
    if (!this.hasPathRules) return true;
    if (pathMatch(this.exact.path, parentRel === "" ? name : `${parentRel}/${name}`)) return false;
    if (parentRel !== this.lastParent) {
      this.lastParent = parentRel;
      this.lastParentFolded = fold(parentRel);
    }
    if (sameName && this.lastParentFolded === parentRel) return true;
    return !pathMatch(folded.path, this.lastParentFolded === "" ? fname : `${this.lastParentFolded}/${fname}`);
  }

  /** Throws RESERVED_PATH / HIDDEN_PATH_NOT_ALLOWED / DENIED_PATH, in that order. */
  check(workdir: string, parts: readonly string[], shown: string): void {
    for (const p of parts) if (this.reserved(p)) throw fail("RESERVED_PATH", workdir, shown);
    if (!this.allowHidden) for (const p of parts) if (isHiddenName(p)) throw fail("HIDDEN_PATH_NOT_ALLOWED", workdir, shown);
    if (this.isDenied(parts)) throw fail("DENIED_PATH", workdir, shown);
  }
}
