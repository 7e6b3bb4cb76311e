import { z } from "zod";
import { MAX_CONTEXT_LINES, MAX_EXCLUDE_GLOBS, MAX_GLOB_CHARS, MAX_REGEX_CHARS } from "../../../fs/index.ts";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { boundedCount, excludeArg, ignoredCount, ignoreWarnings, includeIgnoredArg, rootPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function searchTextInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    query: z
      .string()
      .min(1)
      .describe(`Text to find within single lines: literal text, or with regex=true an RE2 regular expression (at most ${MAX_REGEX_CHARS} characters).`),
    path: rootPathArg,
    glob: z
      .string()
      .max(MAX_GLOB_CHARS)
      .nullable()
      .default(null)
      .describe(
        "Optional file filter. Without '/' it matches the file name at any depth ('*.ts'); with '/' it " +
          `matches the path relative to the search directory ('src/**/*.ts'). '*' and '?' never cross '/'. At most ${MAX_GLOB_CHARS} characters.`,
      ),
    case_sensitive: z.boolean().default(true).describe("false compares case-insensitively (with regex=true: RE2's (?i))."),
    regex: z
      .boolean()
      .default(false)
      .describe(
        "true: query is an RE2 regular expression (linear-time; no lookaround, no backreferences), matched per line " +
          "like ripgrep: '^'/'$' are the line's start/end (a CRLF line ends in '\\r'), a match never spans lines, and lines over 64 KiB never match.",
      ),
    context_lines: z
      .number()
      .int()
      .min(0)
      .max(MAX_CONTEXT_LINES)
      .default(0)
      .describe(
        `Lines of context (0 to ${MAX_CONTEXT_LINES}) returned with each match as 'before' and 'after'. Each line appears once per file: ` +
          "'before' skips lines already shown for the previous match, 'after' stops before the next matching line. null marks a line that is not valid UTF-8.",
      ),
    limit: boundedCount(deps.limits.default_search_results, deps.limits.max_search_results, "Maximum matches to return."),
    include_ignored: includeIgnoredArg,
    exclude: excludeArg(MAX_EXCLUDE_GLOBS, MAX_GLOB_CHARS),
  });
}

export const searchTextOutput = z.object({
  matches: z.array(
    z.object({
      path: z.string(),
      line: z.number().int(),
      text: z.string(),
      text_truncated: z.boolean().optional(),
      before: z.array(z.string().nullable()).optional(),
      after: z.array(z.string().nullable()).optional(),
      context_truncated: z.boolean().optional(),
    }),
  ),
  returned: z.number().int(),
  truncated: z.boolean(),
  unreadable: z.number().int().describe("Files skipped because they could not be read (an I/O error, no read permission)."),
  ignored: ignoredCount,
  ignore_warnings: ignoreWarnings,
});

export function searchTextTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "search_text",
    title: "Search text",
    description:
      "Search UTF-8 text files below a directory of a workdir for a literal string, or (regex=true) an " +
      "RE2 regular expression. Returns matching lines (path, 1-based line number, line text without " +
      "its newline; a line's text is cut at 2 KiB and marked text_truncated), with context_lines lines " +
      "before/after each match if asked (context_truncated marks a cut context line). Binary files, " +
      "VCS directories, hidden, denied and reserved paths are skipped, and so is what .gitignore/.ignore files ignore unless include_ignored=true (counted in ignored). truncated=true means more " +
      "matches exist than the limit.",
    hints: HINTS.read,
    input: searchTextInput(deps),
    output: searchTextOutput,
    handler: async (args, ctx) => ({ structured: await deps.files.searchText(args, ctx.signal) }),
  });
}
