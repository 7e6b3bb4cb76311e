import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const createTextFileInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
  content: z.string().describe("Full text of the new file, written verbatim as UTF-8 (no BOM added, line endings kept). May be empty."),
});

export const createTextFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  created: z.literal(true),
  bytes_written: z.number().int(),
  revision: revisionOut,
});

export function createTextFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "create_text_file",
    title: "Create text file",
    description:
      "Create a new UTF-8 text file in a read-write workdir. Never overwrites: anything already at the " +
      "path gives PATH_ALREADY_EXISTS. The parent directory must exist (see create_directory). To change " +
      "an existing file use edit_text_file.",
    hints: HINTS.create,
    input: createTextFileInput,
    output: createTextFileOutput,
    handler: async (args) => ({ structured: await deps.files.createTextFile(args) }),
  });
}
