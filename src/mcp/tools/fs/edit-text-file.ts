import { z } from "zod";
import { DIFF_MAX_BYTES, DIFF_MAX_COMPARISONS, DIFF_MAX_EDIT_LINES, DIFF_MAX_WINDOW_BYTES, DIFF_MAX_WINDOW_LINES } from "../../../fs/index.ts";
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
    dry_run: z
      .boolean()
      .default(false)
      .describe("true: check everything (revision, policy, edits) and return the diff, but write nothing."),
  });
}

export const editTextFileOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  edited: z.boolean().describe("false for a dry run: nothing was written."),
  dry_run: z.boolean(),
  edits_applied: z.number().int(),
  bytes_before: z.number().int(),
  bytes_after: z.number().int(),
  revision_before: revisionOut,
  revision: revisionOut,
  diff: z.string().describe(`Unified diff of the change, labelled with the workdir-relative path; "" when nothing changed.`),
  diff_truncated: z
    .boolean()
    .describe(
      `true: the diff holds only the hunks that fit in ${DIFF_MAX_BYTES / 1024} KiB, or only its headers when the changed region (first to last changed line, old and new text together) holds more than ${DIFF_MAX_WINDOW_LINES} lines or ${DIFF_MAX_WINDOW_BYTES / 1024 / 1024} MiB, or the change needs more than ${DIFF_MAX_EDIT_LINES} line insertions and deletions or ${DIFF_MAX_COMPARISONS} line comparisons. The edit itself is never limited by these.`,
    ),
});

export function editTextFileTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "edit_text_file",
    title: "Edit text file",
    description:
      "Apply exact text replacements to an existing UTF-8 text file in a read-write workdir, guarded by " +
      "its revision token (from read_text_file or stat_file): a file changed since gives REVISION_CONFLICT " +
      "and nothing is written. Line endings, BOM and untouched bytes are preserved. Returns the new revision " +
      "and a unified diff of the change. dry_run=true makes every check and returns the same diff without writing.",
    hints: HINTS.destructive,
    input: editTextFileInput(deps),
    output: editTextFileOutput,
    handler: async (args) => ({ structured: await deps.files.editTextFile(args) }),
    auditArgs: (args) => ({ edit_count: args.edits.length, dry_run: args.dry_run }),
  });
}
