// The search wing's one door: search_text's and find_files's engine (walks, scan, worker pool) as
// the rest of the file layer sees it. fs/service.ts and fs/index.ts import from here and nowhere
// else in search/.
export { searchText, type SearchMatch, type SearchOutput } from "./search.ts";
export { checkSearchRequest, type SearchParams, type SearchRequest } from "./request.ts";
export { startSearchWorker } from "./search-pool.ts";
export { MAX_CONTEXT_LINES } from "./scan-context.ts";
export { MAX_REGEX_CHARS } from "./scan-regex.ts";
export { findFiles, type FindOutput } from "./find.ts";
