import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export const moveFileInput = z.strictObject({
  workdir: workdirArg,
  source: targetPathArg.describe("The file or directory to move, relative to the workdir root. Absolute paths, '~' and '..' escaping the root are refused."),
  destination: targetPathArg.describe(
    "Its new path in the same workdir. Must not exist yet (nothing is ever overwritten); its parent directory must exist.",
  ),
  expected_revision: z
    .string()
    .describe("The source's revision token ('v1:' + 16 hex) from stat_file or read_text_file; for a directory, its stat_file revision."),
});

export const moveFileOutput = z.object({
  workdir: z.string(),
  source: z.string(),
  destination: z.string(),
  moved: z.literal(true),
  type: z.enum(["file", "directory"]),
  revision_before: revisionOut,
  revision: revisionOut,
});

// Destructive: the source name disappears. Idempotent: a repeat finds no source (PATH_NOT_FOUND)
// or a stale revision and changes nothing more.
export function moveFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "move_file",
    title: "Move or rename file or directory",
    description:
      "Move or rename one regular file or one directory (with everything in it) within a single read-write " +
      "workdir, guarded by the source's revision token from stat_file. Never overwrites: an existing destination " +
      "gives PATH_ALREADY_EXISTS. The destination's parent must exist. A directory cannot move below itself, " +
      "symlinks are refused, and nothing moves to another workdir or filesystem. Returns the moved object's " +
      "new revision.",
    hints: HINTS.destructive,
    input: moveFileInput,
    output: moveFileOutput,
    handler: async (args) => ({ structured: await deps.files.moveFile(args) }),
  });
}
