import { z } from "zod";
import { MAX_GLOB_CHARS } from "../../../fs/index.ts";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { boundedCount, rootPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function searchTextInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    query: z.string().min(1).describe("Literal text to find (never a regular expression). Matched within single lines."),
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
    case_sensitive: z.boolean().default(true).describe("false compares case-insensitively."),
    limit: boundedCount(deps.limits.default_search_results, deps.limits.max_search_results, "Maximum matches to return."),
  });
}

export const searchTextOutput = z.object({
  matches: z.array(
    z.object({
      path: z.string(),
      line: z.number().int(),
      text: z.string(),
      text_truncated: z.boolean().optional(),
    }),
  ),
  returned: z.number().int(),
  truncated: z.boolean(),
});

export function searchTextTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "search_text",
    title: "Search text",
    description:
      "Search UTF-8 text files below a directory of a workdir for a literal string. Returns matching " +
      "lines (path, 1-based line number, line text without its newline; a very long line's text is " +
      "cut and marked text_truncated). Binary files, VCS directories, hidden, denied and reserved " +
      "paths are skipped. truncated=true means more matches exist than the limit.",
    hints: HINTS.read,
    input: searchTextInput(deps),
    output: searchTextOutput,
    handler: async (args, ctx) => ({ structured: await deps.files.searchText(args, ctx.signal) }),
  });
}
