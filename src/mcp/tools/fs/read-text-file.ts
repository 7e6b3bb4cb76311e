import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { optionalBoundedCount, revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function readTextFileInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    path: targetPathArg,
    start_line: z.number().int().min(1).optional().meta({ default: 1 }).describe("First line to return (1-based). Default 1."),
    max_lines: optionalBoundedCount(
      deps.limits.max_read_lines_default,
      deps.limits.max_read_lines_max,
      "Maximum lines to return (a workdir may set a lower maximum). With start_line 1 this is the first N lines (head).",
    ),
    tail_lines: z
      .number()
      .int()
      .min(1)
      .optional()
      .meta({ maximum: deps.limits.max_read_lines_max })
      .describe(
        "Return the last N lines instead of a page (a final newline ends the last line; it does not add an empty one). " +
          `Not with start_line or max_lines. Values above ${deps.limits.max_read_lines_max} are clamped.`,
      ),
  });
}

export const readTextFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  start_line: z.number().int().nullable().describe("null only with tail_lines, when the returned lines do not reach line 1."),
  end_line: z.number().int().nullable(),
  content: z.string(),
  bytes_returned: z.number().int(),
  has_more: z.boolean(),
  next_start_line: z.number().int().nullable(),
  revision: revisionOut,
  lines_returned: z.number().int().optional().describe("tail_lines only: how many lines content holds."),
  has_earlier_lines: z.boolean().optional().describe("tail_lines only: lines exist before the returned ones."),
});

export function readTextFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "read_text_file",
    title: "Read text file",
    description:
      "Read a page of lines from a UTF-8 text file. Line endings are kept exactly (CRLF stays CRLF); a " +
      "UTF-8 BOM is not shown. When has_more is true, call again with start_line=next_start_line. " +
      "tail_lines=N returns the last N lines (the end of a log) without reading the whole file. " +
      "The revision token identifies this version of the file; pass it to edit_text_file or delete_file.",
    hints: HINTS.read,
    input: readTextFileInput(deps),
    output: readTextFileOutput,
    handler: async (args, ctx) => ({ structured: await deps.files.readTextFile(args, ctx.signal) }),
  });
}
