import { z } from "zod";
import { DEFAULT_TREE_DEPTH, MAX_EXCLUDE_GLOBS, MAX_GLOB_CHARS, MAX_TREE_DEPTH, type DirectoryTreeOutput, type TreeNode } from "../../../fs/index.ts";
import { escapeControls } from "../../../common/escape.ts";
import { HINTS, defineTool, type McpTool } from "../../tool.ts";
import { boundedCount, entryType, excludeArg, ignoredCount, ignoreWarnings, includeIgnoredArg, rootPathArg, workdirArg } from "./common.ts";
import type { FsToolDeps } from "./service.ts";

export function directoryTreeInput(deps: FsToolDeps) {
  return z.strictObject({
    workdir: workdirArg,
    path: rootPathArg,
    max_depth: boundedCount(DEFAULT_TREE_DEPTH, MAX_TREE_DEPTH, "Levels to show below path (1 = its entries only)."),
    limit: boundedCount(deps.limits.max_list_entries, deps.limits.max_list_entries, "Maximum entries in the whole tree."),
    include_ignored: includeIgnoredArg,
    exclude: excludeArg(MAX_EXCLUDE_GLOBS, MAX_GLOB_CHARS),
  });
}

const treeNode = z.object({
  name: z.string(),
  type: entryType,
  size: z.number().int().optional().describe("Files only: size in bytes."),
  get children(): z.ZodOptional<z.ZodArray<typeof treeNode>> {
    return z.array(treeNode).optional().describe("Directories that were read, in name order. Absent: not read (max_depth, truncated, unreadable).");
  },
  truncated: z.literal(true).optional().describe("Directories only: the entry limit or the walk cap left some or all of its entries out."),
});

export const directoryTreeOutput = z.object({
  workdir: z.string(),
  path: z.string(),
  max_depth: z.number().int(),
  limit: z.number().int(),
  tree: treeNode,
  returned: z.number().int(),
  truncated: z.boolean(),
  depth_limited: z.boolean(),
  ignored: ignoredCount,
  ignore_warnings: ignoreWarnings,
});

/** Longest text rendering: beyond it the text says so and the JSON mirror still holds every node. */
const RENDER_MAX_CHARS = 64 * 1024;

/**
 * One line per node, indented two spaces per level: `dir/`, `file  123 B`, `link@ (symlink)`. Names
 * are shown with escapeControls: a name holding a newline cannot draw a line of its own.
 */
export function renderTree(out: DirectoryTreeOutput): string {
  const lines: string[] = [`${out.path === "" ? "." : escapeControls(out.path)}/${out.tree.truncated ? "  [truncated]" : ""}`];
  let chars = lines[0]!.length;
  let cut = false;
  const walk = (nodes: readonly TreeNode[], indent: string): void => {
    for (const n of nodes) {
      if (cut) return;
      const name = escapeControls(n.name);
      let line: string;
      if (n.type === "directory") line = `${indent}${name}/${n.children === undefined && !n.truncated ? "  …" : ""}${n.truncated ? "  [truncated]" : ""}`;
      else if (n.type === "file") line = `${indent}${name}  ${n.size} B`;
      else if (n.type === "symlink") line = `${indent}${name}@  (symlink, not followed)`;
      else line = `${indent}${name}  (${n.type})`;
      chars += line.length + 1;
      if (chars > RENDER_MAX_CHARS) {
        cut = true;
        return;
      }
      lines.push(line);
      if (n.children !== undefined) walk(n.children, `${indent}  `);
    }
  };
  walk(out.tree.children ?? [], "  ");
  if (cut) lines.push("  … (rendering cut; the JSON below has every entry)");
  const notes = [`${out.returned} entries`];
  if (out.truncated) notes.push("truncated: some directories were not fully listed");
  if (out.depth_limited) notes.push(`directories marked … are deeper than max_depth ${out.max_depth}`);
  if (out.ignored > 0) notes.push(`${out.ignored} ignored by ignore files (include_ignored=true shows them)`);
  for (const w of out.ignore_warnings ?? []) notes.push(`ignore file warning: ${w}`);
  lines.push(`(${notes.join("; ")})`);
  return lines.join("\n");
}

export function directoryTreeTool(deps: FsToolDeps): McpTool {
  return defineTool({
    name: "directory_tree",
    title: "Directory tree",
    description:
      "Show the tree below a directory of a workdir: every entry's name, type (file, directory, symlink, " +
      `other) and, for files, size in bytes, nested by directory in name order, level by level up to max_depth (default ${DEFAULT_TREE_DEPTH}, ` +
      `at most ${MAX_TREE_DEPTH}) and at most limit entries. Hidden, denied and reserved entries are not shown, nor (unless include_ignored=true) ` +
      "what .gitignore/.ignore files ignore (counted in ignored); " +
      "symlinks are listed but never followed. truncated=true (on the answer and on each directory concerned) " +
      "means the limit or the walk cap left entries out; a directory without children was not read " +
      "(deeper than max_depth): call again with that directory as path.",
    hints: HINTS.read,
    input: directoryTreeInput(deps),
    output: directoryTreeOutput,
    handler: async (args, ctx) => {
      const structured = await deps.files.directoryTree(args, ctx.signal);
      return { structured, content: [{ type: "text", text: renderTree(structured) }] };
    },
  });
}
