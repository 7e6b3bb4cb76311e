import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const createDirectoryInput = z.strictObject({
  workdir: workdirArg,
  path: targetPathArg,
});

export const createDirectoryOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  created: z.literal(true),
  revision: revisionOut,
});

export function createDirectoryTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "create_directory",
    title: "Create directory",
    description:
      "Create one directory in a read-write workdir. Exactly one level: the parent must exist (create " +
      "'a' before 'a/b'). Anything already at the path gives PATH_ALREADY_EXISTS.",
    hints: HINTS.createIdempotent,
    input: createDirectoryInput,
    output: createDirectoryOutput,
    handler: async (args) => ({ structured: await deps.files.createDirectory(args) }),
  });
}
