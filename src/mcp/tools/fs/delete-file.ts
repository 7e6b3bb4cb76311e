import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionArg, revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const deleteFileInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
  expected_revision: revisionArg,
});

export const deleteFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  deleted: z.literal(true),
  bytes_deleted: z.number().int(),
  revision_deleted: revisionOut,
});

export function deleteFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "delete_file",
    title: "Delete file",
    description:
      "Permanently delete one regular file (text or binary) in a read-write workdir, guarded by its " +
      "revision token from stat_file or read_text_file. There is no trash. Directories and symlinks are " +
      "refused.",
    hints: HINTS.destructive,
    input: deleteFileInput,
    output: deleteFileOutput,
    handler: async (args) => ({ structured: await deps.files.deleteFile(args) }),
  });
}
