import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { revisionArg, revisionOut, targetPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function editTextFileInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    path: targetPathArg,
    expected_revision: revisionArg,
    edits: z
      .array(
        z.strictObject({
          old_text: z.string().describe("Exact text to replace. Empty only to fill an empty file."),
          new_text: z.string().describe("Replacement text (empty deletes old_text)."),
          expected_count: z
            .number()
            .int()
            .min(1)
            .default(1)
            .describe("How many times old_text must occur; all occurrences are replaced."),
        }),
      )
      .min(1)
      .meta({ maxItems: deps.limits.max_edits_per_call })
      .describe(
        `Replacements applied in order, each to the result of the previous one; all or nothing. At most ${deps.limits.max_edits_per_call}.`,
      ),
  });
}

export const editTextFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  edited: z.literal(true),
  edits_applied: z.number().int(),
  bytes_before: z.number().int(),
  bytes_after: z.number().int(),
  revision_before: revisionOut,
  revision: revisionOut,
});

export function editTextFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "edit_text_file",
    title: "Edit text file",
    description:
      "Apply exact text replacements to an existing UTF-8 text file in a read-write workdir, guarded by " +
      "its revision token (from read_text_file or stat_file): a file changed since gives REVISION_CONFLICT " +
      "and nothing is written. Line endings, BOM and untouched bytes are preserved. Returns the new revision.",
    hints: HINTS.destructive,
    input: editTextFileInput(deps),
    output: editTextFileOutput,
    handler: async (args) => ({ structured: await deps.files.editTextFile(args) }),
    auditArgs: (args) => ({ edit_count: args.edits.length }),
  });
}
