// Configuration problems and how they become the one CONFIGURATION_ERROR. A problem is located
// by its path in the raw document (the TOML shape, which both source formats are mapped onto);
// each source format names that path in its own vocabulary, so the operator reads
// `workdirs[2].read_only` for a TOML file and `WORKDIR_03_READ_ONLY` for an .env file.
//
// Reasons never contain a configured value: a value may be a secret (a proxy password) or a
// host path, so the operator is told which key is wrong and why, never what it held.
import { ServerfsError } from "../errors.ts";

export type KeyPath = ReadonlyArray<string | number>;

export interface Problem {
  path: KeyPath;
  reason: string;
}

/** Names a raw-document path in the vocabulary of the source the operator wrote. */
export type KeyNamer = (path: KeyPath) => string;

/** `workdirs[2].read_only`, `agent.acp_profiles[0].command` (0-based indexes, like TOML arrays in code). */
export function dottedKey(path: KeyPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? part : `.${part}`;
  }
  return out === "" ? "(document)" : out;
}

/** Already-named problems from a source parser (syntax errors that have no raw-document path). */
export interface NamedProblem {
  key: string;
  reason: string;
}

/** `file: key: reason`; a problem with the file itself (key "") reads `file: reason`. */
export function formatProblem(file: string, key: string, reason: string): string {
  return key === "" ? `${file}: ${reason}` : `${file}: ${key}: ${reason}`;
}

/**
 * One CONFIGURATION_ERROR for a non-empty list of problems. The message carries the first
 * problem and how many more there are; `details.problems` lists every one, in order.
 */
export function configurationError(file: string, problems: readonly NamedProblem[]): ServerfsError {
  const lines = problems.map((p) => formatProblem(file, p.key, p.reason));
  const first = lines[0] ?? formatProblem(file, "(document)", "invalid configuration");
  const more = lines.length > 1 ? ` (and ${lines.length - 1} more problem${lines.length > 2 ? "s" : ""})` : "";
  // `keyed`: whether each problem is about a key (false: about the file itself), for hints.
  return new ServerfsError("CONFIGURATION_ERROR", `${first}${more}`, { problems: lines, keyed: problems.map((p) => p.key !== "") });
}

export function nameProblems(problems: readonly Problem[], namer: KeyNamer): NamedProblem[] {
  return problems.map((p) => ({ key: namer(p.path), reason: p.reason }));
}

/** The type word used in "expected X, got Y" reasons. */
export function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return Number.isInteger(value) ? "an integer" : "a float";
    case "bigint":
      return "an out-of-range integer";
    case "boolean":
      return "a boolean";
    case "object":
      return "a table";
    default:
      return typeof value;
  }
}
