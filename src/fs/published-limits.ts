// The limits the file tools publish in their schemas (defaults and maxima of `limit`, `max_lines`,
// `edits`, `paths`), computed from the registry alone. Its own module, importing nothing, so that
// serve can tell whether the build-time tools/list applies before it loads the file layer.
import type { Registry } from "../config/types.ts";

export const DEFAULT_MAX_LINES = 200;

export interface PublishedLimits {
  default_list_limit: number;
  max_list_entries: number;
  default_search_results: number;
  max_search_results: number;
  max_read_lines_default: typeof DEFAULT_MAX_LINES;
  max_read_lines_max: number;
  max_edits_per_call: number;
  max_files_per_read: number;
}

export function publishedLimits(registry: Registry): PublishedLimits {
  const limits = registry.limits;
  const maxReadLines = registry.workdirs.reduce((m, w) => Math.max(m, w.max_read_lines), 1);
  return {
    default_list_limit: Math.min(limits.default_list_limit, limits.max_list_entries),
    max_list_entries: limits.max_list_entries,
    default_search_results: Math.min(limits.default_search_results, limits.max_search_results),
    max_search_results: limits.max_search_results,
    max_read_lines_default: DEFAULT_MAX_LINES,
    max_read_lines_max: maxReadLines,
    max_edits_per_call: limits.max_edits_per_call,
    max_files_per_read: limits.max_files_per_read,
  };
}
