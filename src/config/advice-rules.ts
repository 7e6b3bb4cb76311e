// `[[agent.advice_rules]]`: the operator's rules for approval advice (docs/configuration.md,
// "Approval advice"). The shape (types, unknown keys) is checked by schema.ts with the names
// declared here; this file applies the rules that need more than a type: a regex must compile as
// RE2, a path glob must be relative to the workdir, a question rule cannot recommend an option,
// names are unique. Advice is advisory only: nothing configured here can answer a request.
import { BOUNDS } from "./defaults.ts";
import type { KeyPath } from "./problems.ts";
import type { AdviceChoice, AdviceKind, AdviceRule } from "./types.ts";

export const ADVICE_KINDS: readonly AdviceKind[] = [
  "command",
  "file_change",
  "provider_permission",
  "network_permission",
  "mcp_tool",
  "other",
  "question",
];
export const ADVICE_CHOICES: readonly AdviceChoice[] = ["allow_once", "allow_always", "reject_once", "reject_always", "none"];
/** A rule name: what the advice's `rule` says. `builtin:` names cannot be written (no colon). */
export const ADVICE_RULE_NAME_PATTERN = "^[A-Za-z][A-Za-z0-9_.-]{0,63}$";

export interface RawAdviceRule {
  advise: AdviceChoice;
  name?: string;
  kind?: AdviceKind;
  command_prefix?: string;
  command_regex?: string;
  paths?: string[];
  runtime?: string;
  reason?: string;
}

type Add = (path: KeyPath, reason: string) => void;

/** RE2 (re2js) is loaded only when a rule has a regex: it costs ~200 ms at start. */
export function compileRe2(pattern: string): { test(text: string): boolean } {
  const { RE2JS } = require("re2js") as typeof import("re2js");
  const re = RE2JS.compile(pattern);
  return { test: (text) => re.matcher(text).find() };
}

function textProblem(value: string, what: string): string | null {
  if (value.length === 0) return `${what} must not be empty`;
  if (value.includes("\0")) return `${what} must not contain NUL`;
  if (value.length > BOUNDS.maxAdviceTextChars) return `${what} must be at most ${BOUNDS.maxAdviceTextChars} characters`;
  return null;
}

/** A rule's path glob names paths inside the workdir, so it is relative and never climbs out. */
function globProblem(glob: string): string | null {
  const text = textProblem(glob, "a path glob");
  if (text) return text;
  if (glob.startsWith("/") || glob.startsWith("\\") || /^[A-Za-z]:/.test(glob) || glob.startsWith("~")) {
    return "a path glob is relative to the workdir (no leading '/', '~' or drive)";
  }
  if (glob.split(/[\\/]/).includes("..")) return "a path glob must not contain a '..' segment";
  return null;
}

export function normalizeAdviceRules(raw: readonly RawAdviceRule[], add: Add): AdviceRule[] {
  const names = new Set<string>();
  return raw.map((r, i) => {
    const at = (...rest: (string | number)[]): KeyPath => ["agent", "advice_rules", i, ...rest];
    const name = r.name ?? `agent.advice_rules[${i}]`;
    if (names.has(name)) add(at("name"), `duplicate rule name '${name}'`);
    names.add(name);
    for (const key of ["command_prefix", "command_regex", "reason"] as const) {
      const value = r[key];
      const problem = value === undefined ? null : textProblem(value, key);
      if (problem) add(at(key), problem);
    }
    if (r.command_regex !== undefined && textProblem(r.command_regex, "command_regex") === null) {
      try {
        compileRe2(r.command_regex);
      } catch {
        add(at("command_regex"), "not a valid RE2 regular expression");
      }
    }
    (r.paths ?? []).forEach((glob, j) => {
      const problem = globProblem(glob);
      if (problem) add(at("paths", j), problem);
    });
    if (r.paths !== undefined && r.paths.length === 0) add(at("paths"), "must list at least one glob (leave the key out to match any path)");
    if (r.kind === "question") {
      if (r.advise !== "none") add(at("advise"), 'a question offers no options to recommend: use advise = "none"');
      for (const key of ["command_prefix", "command_regex", "paths"] as const) {
        if (r[key] !== undefined) add(at(key), "a question names no command or path: this matcher can never match it");
      }
    }
    return {
      name,
      kind: r.kind ?? null,
      command_prefix: r.command_prefix ?? null,
      command_regex: r.command_regex ?? null,
      paths: r.paths ?? null,
      runtime: r.runtime ?? null,
      advise: r.advise,
      reason: r.reason ?? null,
    };
  });
}
