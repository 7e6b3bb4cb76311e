import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { boundedCount, revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function readTextFileInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    path: targetPathArg,
    start_line: z.number().int().min(1).default(1).describe("First line to return (1-based)."),
    max_lines: boundedCount(
      deps.limits.max_read_lines_default,
      deps.limits.max_read_lines_max,
      "Maximum lines to return (a workdir may set a lower maximum).",
    ),
  });
}

export const readTextFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  start_line: z.number().int(),
  end_line: z.number().int(),
  content: z.string(),
  bytes_returned: z.number().int(),
  has_more: z.boolean(),
  next_start_line: z.number().int().nullable(),
  revision: revisionOut,
});

export function readTextFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "read_text_file",
    title: "Read text file",
    description:
      "Read a page of lines from a UTF-8 text file. Line endings are kept exactly (CRLF stays CRLF); a " +
      "UTF-8 BOM is not shown. When has_more is true, call again with start_line=next_start_line. " +
      "The revision token identifies this version of the file; pass it to edit_text_file or delete_file.",
    hints: HINTS.read,
    input: readTextFileInput(deps),
    output: readTextFileOutput,
    handler: async (args, ctx) => ({ structured: await deps.files.readTextFile(args, ctx.signal) }),
  });
}
