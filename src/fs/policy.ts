// Lexical path policy (no filesystem access): normalisation and confinement, reserved names,
// hidden names, deny rules. One PathPolicy per workdir is shared by every channel, so a path that
// is refused by direct access is also invisible to list, find and search.
//
// Deny semantics (README §3.4): a glob without `/` is matched (fnmatch, case-sensitive) against
// EVERY component, so `internal` denies `internal/x.py`; a glob with `/` is matched against the
// whole workdir-relative path and against each ancestor prefix, so anything below a denied
// directory is denied too (`docs/*.md`, `secret/**`, `**/build/**`).

import type { WorkdirPolicy } from "../config/types.ts";
import { fail } from "./fail.ts";
import { compileFnmatch, compilePathGlob } from "./glob.ts";

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

export function isReservedName(name: string): boolean {
  return name.startsWith(RESERVED_TEMP_PREFIX) || name === RESERVED_SENTINEL;
}

export function isHiddenName(name: string): boolean {
  return name.startsWith(".");
}

/**
 * Split a caller path into workdir-relative components. `""`, `"."`, `"./"` and `"sub/.."` are the
 * root (empty list). Backslash is an ordinary character on POSIX.
 */
export function normalizeRequestPath(workdir: string, raw: string): string[] {
  if (raw.includes("\0")) throw fail("ACCESS_DENIED", workdir, raw, "path contains NUL bytes");
  // The kernel's PATH_MAX: no longer path can be opened, so it is refused before any work on it.
  if (raw.length > MAX_PATH_BYTES || Buffer.byteLength(raw, "utf8") > MAX_PATH_BYTES) {
    throw fail("INVALID_NAME", workdir, raw, `path is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (raw.startsWith("/") || raw.startsWith("~")) throw fail("PATH_OUTSIDE_WORKDIR", workdir, raw);
  if (process.platform === "win32" && (/^[A-Za-z]:/.test(raw) || raw.startsWith("\\"))) {
    throw fail("PATH_OUTSIDE_WORKDIR", workdir, raw);
  }
  const parts: string[] = [];
  for (const part of raw.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw fail("PATH_OUTSIDE_WORKDIR", workdir, raw);
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  return parts;
}

/**
 * Whether a caller path can only name a directory: it ends in `/`, or its last component is `.` or
 * `..`. The kernel refuses to create or replace a file through such a path; normalisation drops
 * the hint, so the tools that create, replace or delete a file ask before normalising.
 */
export function namesDirectory(raw: string): boolean {
  const last = raw.slice(raw.lastIndexOf("/") + 1);
  return raw !== "" && (last === "" || last === "." || last === "..");
}

export class PathPolicy {
  readonly allowHidden: boolean;
  /** All component globs as one alternation: one regex test per name on the walk hot path. */
  private readonly componentRule: RegExp | null;
  private readonly pathRules: RegExp[];

  constructor(policy: Pick<WorkdirPolicy, "allow_hidden" | "disable_default_deny" | "extra_deny_globs">) {
    this.allowHidden = policy.allow_hidden;
    const globs = [...(policy.disable_default_deny ? [] : DEFAULT_DENY_GLOBS), ...policy.extra_deny_globs];
    const component: RegExp[] = [];
    const path: RegExp[] = [];
    const seen = new Set<string>();
    for (const raw of globs) {
      const glob = raw.trim();
      if (glob === "" || seen.has(glob)) continue;
      seen.add(glob);
      const body = glob.replace(/^\/+/, "").replace(/\/+$/, "");
      if (body === "") continue;
      if (body.includes("/")) path.push(compilePathGlob(body, true));
      else component.push(compileFnmatch(body));
    }
    this.componentRule = component.length === 0 ? null : new RegExp(component.map((re) => `(?:${re.source})`).join("|"), "u");
    this.pathRules = path;
  }

  /** Deny test for a single name (component rules only). */
  nameDenied(name: string): boolean {
    return this.componentRule !== null && this.componentRule.test(name);
  }

  /** Deny test for a full relative path whose ancestors are already known to be allowed. */
  leafPathDenied(rel: string): boolean {
    for (const re of this.pathRules) if (re.test(rel)) return true;
    return false;
  }

  isDenied(parts: readonly string[]): boolean {
    for (const p of parts) if (this.nameDenied(p)) return true;
    if (this.pathRules.length > 0) {
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
    if (isReservedName(name)) return false;
    if (!this.allowHidden && name.charCodeAt(0) === 46 /* . */) return false;
    if (this.nameDenied(name)) return false;
    if (this.pathRules.length > 0 && this.leafPathDenied(parentRel === "" ? name : `${parentRel}/${name}`)) return false;
    return true;
  }

  /** Throws RESERVED_PATH / HIDDEN_PATH_NOT_ALLOWED / DENIED_PATH, in that order. */
  check(workdir: string, parts: readonly string[], shown: string): void {
    for (const p of parts) if (isReservedName(p)) throw fail("RESERVED_PATH", workdir, shown);
    if (!this.allowHidden) for (const p of parts) if (isHiddenName(p)) throw fail("HIDDEN_PATH_NOT_ALLOWED", workdir, shown);
    if (this.isDenied(parts)) throw fail("DENIED_PATH", workdir, shown);
  }
}
