import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const uploadBinaryFileInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
  data_base64: z
    .string()
    .nullable()
    .default(null)
    .describe("The file's bytes, standard base64 (RFC 4648, padded, no whitespace). Empty string = empty file."),
  overwrite: z
    .boolean()
    .default(false)
    .describe("false: create a new file (fails if anything exists). true: replace an existing regular file; needs expected_revision."),
  expected_revision: z
    .string()
    .nullable()
    .default(null)
    .describe("Required with overwrite=true (revision from stat_file); must be omitted otherwise."),
});

export const uploadBinaryFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  created: z.boolean(),
  replaced: z.boolean(),
  bytes_written: z.number().int(),
  sha256: z.string(),
  revision_before: z.string().nullable(),
  revision: revisionOut,
});

export function uploadBinaryFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "upload_binary_file",
    title: "Upload binary file",
    description:
      "Write exact bytes (base64) to a file in a read-write workdir with binary transfer enabled. By " +
      "default creates a new file and never overwrites; overwrite=true with expected_revision replaces an " +
      "existing regular file atomically (readers see old or new bytes, never a mix).",
    hints: HINTS.create,
    input: uploadBinaryFileInput,
    output: uploadBinaryFileOutput,
    handler: async (args) => ({ structured: await deps.files.uploadBinaryFile(args) }),
  });
}
