import { z } from "zod";
import { MAX_EXCLUDE_GLOBS, MAX_GLOB_CHARS } from "../../../fs/index.ts";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { boundedCount, excludeArg, ignoredCount, ignoreWarnings, includeIgnoredArg, rootPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function findFilesInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    pattern: z
      .string()
      .min(1)
      .max(MAX_GLOB_CHARS)
      .describe(`Case-sensitive wildcard matched against the file name only: '*', '?', '[abc]'. Example: '*.md'. At most ${MAX_GLOB_CHARS} characters.`),
    path: rootPathArg,
    limit: boundedCount(deps.limits.default_search_results, deps.limits.max_search_results, "Maximum matches to return."),
    include_ignored: includeIgnoredArg,
    exclude: excludeArg(MAX_EXCLUDE_GLOBS, MAX_GLOB_CHARS),
  });
}

export const findFilesOutput = z.object({
  matches: z.array(z.object({ path: z.string() })),
  returned: z.number().int(),
  truncated: z.boolean(),
  ignored: ignoredCount,
  ignore_warnings: ignoreWarnings,
});

export function findFilesTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "find_files",
    title: "Find files by name",
    description:
      "Find regular files by name below a directory of a workdir (recursive). The pattern matches the " +
      "file name, not the path. Symlinked directories are never entered; hidden, denied and reserved " +
      "entries are skipped, and so is what .gitignore/.ignore files ignore unless include_ignored=true (counted in ignored). truncated=true means the limit or the walk cap stopped the search.",
    hints: HINTS.read,
    input: findFilesInput(deps),
    output: findFilesOutput,
    handler: async (args, ctx) => ({ structured: await deps.files.findFiles(args, ctx.signal) }),
  });
}
