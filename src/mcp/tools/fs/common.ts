// Schema pieces shared by the file tools, and the slice of the filesystem service they consume.
// Limits are never constants here: every default and maximum a schema publishes comes from the
// operator's configuration through `FsToolLimits`.
import { z } from "zod";

/** The limits the file service reports (`FileService.limits()`); schemas publish them. */
export interface FsToolLimits {
  default_list_limit: number;
  max_list_entries: number;
  default_search_results: number;
  max_search_results: number;
  max_read_lines_default: number;
  max_read_lines_max: number;
  max_edits_per_call: number;
  max_files_per_read: number;
}

export const workdirArg = z
  .string()
  .describe("Workdir alias, exactly as returned by list_workdirs (case-sensitive).");

export const targetPathArg = z
  .string()
  .describe("Path relative to the workdir root, '/'-separated. Absolute paths, '~' and '..' escaping the root are refused.");

export const rootPathArg = z
  .string()
  .default("")
  .describe("Directory relative to the workdir root; '' (the default) or '.' means the root.");

export const revisionArg = z
  .string()
  .describe("Revision token ('v1:' + 16 hex) from stat_file, read_text_file or the previous mutation of this object.");

/**
 * A positive integer parameter whose default and maximum come from configuration. The maximum
 * is published in the schema but not enforced by it: larger values are clamped silently by the
 * file service, as the reference does.
 */
export function boundedCount(defaultValue: number, maximum: number, description: string) {
  return z
    .number()
    .int()
    .min(1)
    .default(Math.min(defaultValue, maximum))
    .meta({ maximum })
    .describe(`${description} Default ${Math.min(defaultValue, maximum)}; values above ${maximum} are clamped to ${maximum}.`);
}

/**
 * boundedCount without a zod default: the default is published but applied by the file service,
 * so a handler can tell "not given" apart from "given the default" (read_text_file refuses
 * start_line or max_lines next to tail_lines).
 */
export function optionalBoundedCount(defaultValue: number, maximum: number, description: string) {
  const shown = Math.min(defaultValue, maximum);
  return z
    .number()
    .int()
    .min(1)
    .optional()
    .meta({ default: shown, maximum })
    .describe(`${description} Default ${shown}; values above ${maximum} are clamped to ${maximum}.`);
}

export const revisionOut = z.string().describe("Opaque revision token of the object ('v1:' + 16 hex).");

export const entryType = z.enum(["file", "directory", "symlink", "other", "reparse_point"]);

/** find_files, search_text and directory_tree: ignore files are on unless this is true. */
export const includeIgnoredArg = z
  .boolean()
  .default(false)
  .describe(
    "true: also return what .gitignore, .ignore and .git/info/exclude files ignore (on by default: ignored entries are left out " +
      "and counted in 'ignored'). Hidden, denied and reserved paths stay out either way.",
  );

/** find_files, search_text and directory_tree: the caller's own pruning globs. */
export function excludeArg(maxGlobs: number, maxChars: number) {
  return z
    .array(z.string().min(1).max(maxChars))
    .max(maxGlobs)
    .default([])
    .describe(
      `Globs to leave out, with search_text.glob's syntax, relative to path: without '/' a name at any depth ('*.min.js', 'dist'), ` +
        `with '/' a path ('src/gen/**'). They match files and directories alike; a matched directory is not entered. At most ${maxGlobs} globs of ${maxChars} characters.`,
    );
}

/** The output fields ignore files add to a walk's answer. */
export const ignoredCount = z.number().int().describe("Entries left out because ignore files ignore them (0 with include_ignored).");
export const ignoreWarnings = z
  .array(z.string())
  .optional()
  .describe("Ignore files used only in part or not at all (too large, too many patterns, unreadable); the walk went on without the rest.");
