// search_text's arguments, checked once. The MCP tool's schema declares the wire shape to clients;
// this is where what the caller sent becomes a SearchRequest, and the one place a search argument
// is refused: its type, the query's rules (not empty, one line, well-formed UTF-16), the glob and
// exclude bounds, context_lines' range, the limit clamp, and the regex, compiled here so a bad
// pattern is the caller's INVALID_ARGUMENT before any walking. The engine (search.ts) takes only
// a SearchRequest and checks nothing again.
import type { Target } from "../context.ts";
import { fail } from "../fail.ts";
import { compileSearchGlob, MAX_GLOB_CHARS } from "../glob.ts";
import { clampLimit } from "../order.ts";
import { compileExclude } from "../walk-filter.ts";
import { MAX_CONTEXT_LINES } from "./scan-context.ts";
import { compileLineRegex, type RegexLines } from "./scan-regex.ts";

/** What a caller sends (the tool's arguments, or a direct caller's), before any check. */
export interface SearchParams {
  query: unknown;
  glob?: unknown;
  case_sensitive?: unknown;
  regex?: unknown;
  context_lines?: unknown;
  limit?: unknown;
  include_ignored?: unknown;
  exclude?: unknown;
}

/** A compiled search glob: (path relative to the search root, name) -> wanted. */
export type SearchGlob = ReturnType<typeof compileSearchGlob>;

export interface SearchLimits {
  default_search_results: number;
  max_search_results: number;
}

/** Checked arguments: only checkSearchRequest makes one. */
export interface SearchRequest {
  readonly query: string;
  /** The compiled glob, or null for every file. */
  readonly glob: SearchGlob | null;
  readonly caseSensitive: boolean;
  /** Regex mode: the compiled pattern this thread scans with (the worker compiles its own from the query). */
  readonly regex: RegexLines | null;
  readonly contextLines: number;
  readonly limit: number;
  readonly includeIgnored: boolean;
  readonly exclude: ((sub: string, name: string) => boolean) | null;
}

function refuse(t: Target, detail: string): never {
  throw fail("INVALID_ARGUMENT", t.alias, t.rel, detail);
}

function optionalBoolean(t: Target, value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "boolean") refuse(t, `${name} must be a boolean`);
  return value;
}

function optionalInt(t: Target, value: unknown, name: string, min: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) refuse(t, `${name} must be an integer >= ${min}`);
  return value;
}

export function checkSearchRequest(t: Target, a: SearchParams, limits: SearchLimits): SearchRequest {
  const query = a.query;
  if (typeof query !== "string") refuse(t, "query must be a string");
  if (query === "") refuse(t, "query must not be empty");
  if (query.includes("\n")) refuse(t, "query must be a single line");
  if (!query.isWellFormed()) refuse(t, "query contains unpaired surrogates");
  let glob: SearchGlob | null = null;
  if (a.glob !== undefined && a.glob !== null) {
    if (typeof a.glob !== "string") refuse(t, "glob must be a string");
    if (a.glob.length > MAX_GLOB_CHARS) refuse(t, `glob must be at most ${MAX_GLOB_CHARS} characters`);
    if (a.glob !== "") glob = compileSearchGlob(a.glob);
  }
  const caseSensitive = optionalBoolean(t, a.case_sensitive, "case_sensitive", true);
  const contextLines = optionalInt(t, a.context_lines, "context_lines", 0) ?? 0;
  if (contextLines > MAX_CONTEXT_LINES) refuse(t, `context_lines must be at most ${MAX_CONTEXT_LINES}`);
  const asked = optionalInt(t, a.limit, "limit", 1);
  const limit = clampLimit(asked, limits.default_search_results, limits.max_search_results);
  let regex: RegexLines | null = null;
  if (a.regex === true) {
    const compiled = compileLineRegex(query, caseSensitive);
    if (typeof compiled === "string") refuse(t, compiled);
    regex = compiled;
  } else optionalBoolean(t, a.regex, "regex", false);
  const includeIgnored = optionalBoolean(t, a.include_ignored, "include_ignored", false);
  if (a.exclude !== undefined && a.exclude !== null && !Array.isArray(a.exclude)) refuse(t, "exclude must be a list of globs");
  const exclude = compileExclude(t, (a.exclude ?? undefined) as readonly string[] | undefined);
  return { query, glob, caseSensitive, regex, contextLines, limit, includeIgnored, exclude };
}
