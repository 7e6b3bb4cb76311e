import { z } from "zod";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { boundedCount, entryType, ignoreWarnings, rootPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function listDirectoryInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    path: rootPathArg,
    offset: z.number().int().min(0).default(0).describe("Number of entries to skip (entries are sorted by name)."),
    limit: boundedCount(deps.limits.default_list_limit, deps.limits.max_list_entries, "Maximum entries to return."),
  });
}

export const listDirectoryOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  entries: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      type: entryType,
      size: z.number().int().nullable(),
      modified_at: z.string().nullable(),
      ignored: z.literal(true).optional().describe("Ignored by .gitignore/.ignore files (find_files, search_text and directory_tree leave it out by default)."),
    }),
  ),
  offset: z.number().int(),
  limit: z.number().int(),
  returned: z.number().int(),
  has_more: z.boolean(),
  ignore_warnings: ignoreWarnings,
});

export function listDirectoryTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "list_directory",
    title: "List directory",
    description:
      "List one directory of a workdir, sorted by name, one page at a time (offset/limit; has_more " +
      "says whether another page exists). Each entry has name, workdir-relative path, type (file, " +
      "directory, symlink, other), size for files and modified_at (UTC). Hidden, denied and reserved " +
      "entries are not shown. Entries .gitignore/.ignore files ignore are listed, marked ignored=true. Symlinks are listed but never followed.",
    hints: HINTS.read,
    input: listDirectoryInput(deps),
    output: listDirectoryOutput,
    handler: async (args) => ({ structured: await deps.files.listDirectory(args) }),
  });
}
