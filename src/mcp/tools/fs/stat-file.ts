import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { entryType, revisionOut, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const statFileInput = z.strictObject({
  workdir: workdirArg,
  path: z
    .string()
    .describe("Path relative to the workdir root; '' is the root itself. A final symlink is described, not followed."),
});

export const statFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  type: entryType,
  size: z.number().int().nullable(),
  modified_at: z.string().nullable(),
  mime_type: z.string().nullable(),
  revision: revisionOut,
});

export function statFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "stat_file",
    title: "Stat file or directory",
    description:
      "Describe one file, directory or symlink without reading it: type, size, modified_at, a MIME type " +
      "guessed from the extension, and its revision token. This is how to get the revision of a directory " +
      "(for delete_directory) or of a binary file (for upload_binary_file with overwrite).",
    hints: HINTS.read,
    input: statFileInput,
    output: statFileOutput,
    handler: async (args) => ({ structured: await deps.files.statFile(args) }),
  });
}
