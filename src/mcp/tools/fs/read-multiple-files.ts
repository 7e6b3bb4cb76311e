import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { optionalBoundedCount, workdirArg } from "./common.ts";
import { readTextFileOutput } from "./read-text-file.ts";
import type { FsToolDeps } from "./service.ts";

export function readMultipleFilesInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    paths: z
      .array(z.string())
      .min(1)
      .max(deps.limits.max_files_per_read)
      .describe(
        `1 to ${deps.limits.max_files_per_read} paths relative to the workdir root, '/'-separated, answered in this order. ` +
          "A path repeated (after normalisation) is answered once, at its first position.",
      ),
    max_lines: optionalBoundedCount(
      deps.limits.max_read_lines_default,
      deps.limits.max_read_lines_max,
      "Maximum lines returned per file, from line 1.",
    ),
  });
}

export const readMultipleFilesOutput = z.object({
  workdir: z.string(),
  files: z.array(
    z.object({
      path: z.string().describe("The path as given in the request."),
      result: readTextFileOutput.nullable().describe("As read_text_file's result for start_line 1; null when error is set."),
      error: z.object({ code: z.string(), message: z.string() }).nullable(),
    }),
  ),
  returned: z.number().int().describe("Entries with a result."),
  bytes_returned: z.number().int(),
  budget_bytes: z.number().int().describe("The byte budget the whole call shared (the workdir's max_read_bytes)."),
});

export function readMultipleFilesTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "read_multiple_files",
    title: "Read multiple files",
    description:
      "Read the first page of several UTF-8 text files of one workdir in one call. Each path gets its own " +
      "entry with either a result (the same object read_text_file returns) or a coded error; one bad path " +
      "does not fail the others. All files share one byte budget: once it is used up, later files get " +
      "READ_BUDGET_EXCEEDED (read them with read_text_file). A file with has_more continues with read_text_file.",
    hints: HINTS.read,
    input: readMultipleFilesInput(deps),
    output: readMultipleFilesOutput,
    handler: async (args, ctx) => ({ structured: await deps.files.readMultipleFiles(args, ctx.signal) }),
    auditArgs: (args) => ({ paths: args.paths.length }),
    auditResult: (out) => ({ failed: out.files.length - out.returned }),
  });
}
