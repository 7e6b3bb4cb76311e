import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionArg, revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const deleteDirectoryInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
  expected_revision: revisionArg,
});

export const deleteDirectoryOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  deleted: z.literal(true),
  revision_deleted: revisionOut,
});

export function deleteDirectoryTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "delete_directory",
    title: "Delete empty directory",
    description:
      "Delete one empty directory in a read-write workdir, guarded by its revision token from stat_file. " +
      "Never recursive: a directory with any entry (including ones you cannot see) gives " +
      "DIRECTORY_NOT_EMPTY. Delete the children first, then stat the directory again for a fresh revision.",
    hints: HINTS.destructive,
    input: deleteDirectoryInput,
    output: deleteDirectoryOutput,
    handler: async (args) => ({ structured: await deps.files.deleteDirectory(args) }),
  });
}
