// The file tools a deployment lists, in the order tools/list gives them (src/mcp/surface.ts). One
// list for every test that checks the surface, so adding a tool means changing it here, once.
/** Listed for every deployment. */
export const FILE_READ_TOOLS = [
  "list_workdirs",
  "list_directory",
  "directory_tree",
  "find_files",
  "search_text",
  "read_text_file",
  "stat_file",
  "read_multiple_files",
  "read_media_file",
] as const;

/** Listed when at least one workdir is read-write. */
export const FILE_MUTATION_TOOLS = ["create_text_file", "edit_text_file", "delete_file", "create_directory", "delete_directory", "move_file"] as const;
