// The server-level instructions an MCP host shows the assistant at initialize.
export const SERVER_INSTRUCTIONS = [
  "serverfs exposes a few host directories (workdirs) through narrow file tools. There is no shell.",
  "Call list_workdirs first: it names each workdir alias and says whether it is read-only or read-write.",
  "Every other tool takes that alias plus a path relative to the workdir root ('' is the root); absolute",
  "paths, '~' and '..' escaping the root are refused, symlinks are never followed, and hidden or",
  "sensitive files (.env, keys) may be refused by policy.",
  "Read with list_directory, directory_tree (a bounded overview of a whole subtree), find_files,",
  "search_text, read_text_file and stat_file. search_text finds literal text, or an RE2 regex with",
  "regex=true (per line, like ripgrep), and context_lines adds surrounding lines.",
  "read_text_file with tail_lines=N gives the last N lines (the end of a log); read_multiple_files reads",
  "several text files in one call; read_media_file returns an image or audio file for you to see or hear.",
  "Write tools appear only when a workdir is read-write: create_text_file and move_file never overwrite;",
  "edit_text_file, delete_file, delete_directory and move_file need the revision token from your latest read",
  "or stat_file, and a REVISION_CONFLICT",
  "means the object changed: read it again before retrying. edit_text_file returns a diff of what it",
  "changed; with dry_run=true it only returns that diff and writes nothing.",
  "Errors come back as 'CODE: detail' with structuredContent {code, message}.",
].join("\n");
