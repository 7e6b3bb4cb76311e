// The one place the tool list is assembled (docs/tools.md): the tools surface-plan.ts names for
// this deployment, in its order, followed by the Agent Bridge tools when the policy allows them.
import type { Registry } from "../config/types.ts";
import { agentSurfaceEnabled, fileToolNames, type FileToolName } from "./surface-plan.ts";
import type { McpTool } from "./tool.ts";
import { createDirectoryTool } from "./tools/fs/create-directory.ts";
import { createTextFileTool } from "./tools/fs/create-text-file.ts";
import { deleteDirectoryTool } from "./tools/fs/delete-directory.ts";
import { deleteFileTool } from "./tools/fs/delete-file.ts";
import { directoryTreeTool } from "./tools/fs/directory-tree.ts";
import { downloadBinaryFileTool } from "./tools/fs/download-binary-file.ts";
import { editTextFileTool } from "./tools/fs/edit-text-file.ts";
import { findFilesTool } from "./tools/fs/find-files.ts";
import { listDirectoryTool } from "./tools/fs/list-directory.ts";
import { listWorkdirsTool } from "./tools/fs/list-workdirs.ts";
import { moveFileTool } from "./tools/fs/move-file.ts";
import { readMediaFileTool } from "./tools/fs/read-media-file.ts";
import { readMultipleFilesTool } from "./tools/fs/read-multiple-files.ts";
import { readTextFileTool } from "./tools/fs/read-text-file.ts";
import { searchTextTool } from "./tools/fs/search-text.ts";
import type { FsToolDeps } from "./tools/fs/service.ts";
import { statFileTool } from "./tools/fs/stat-file.ts";
import { uploadBinaryFileTool } from "./tools/fs/upload-binary-file.ts";

export { agentSurfaceEnabled, hasBinaryWorkdir, hasWritableBinaryWorkdir, hasWritableWorkdir } from "./surface-plan.ts";

const FILE_TOOLS: Record<FileToolName, (deps: FsToolDeps) => McpTool> = {
  list_workdirs: listWorkdirsTool,
  list_directory: listDirectoryTool,
  directory_tree: directoryTreeTool,
  find_files: findFilesTool,
  search_text: searchTextTool,
  read_text_file: readTextFileTool,
  stat_file: statFileTool,
  read_multiple_files: readMultipleFilesTool,
  read_media_file: readMediaFileTool,
  create_text_file: createTextFileTool,
  edit_text_file: editTextFileTool,
  delete_file: deleteFileTool,
  create_directory: createDirectoryTool,
  delete_directory: deleteDirectoryTool,
  move_file: moveFileTool,
  download_binary_file: downloadBinaryFileTool,
  upload_binary_file: uploadBinaryFileTool,
};

export function buildToolSurface(registry: Registry, deps: FsToolDeps, agentTools: readonly McpTool[] = []): McpTool[] {
  const tools = fileToolNames(registry).map((name) => {
    const tool = FILE_TOOLS[name](deps);
    if (tool.name !== name) throw new Error(`tool ${tool.name} is registered as ${name}`);
    return tool;
  });
  // Registration point for the Agent Bridge tools (src/mcp/tools/agent/): serve builds them and
  // passes them in; they are listed only when the policy allows.
  if (agentSurfaceEnabled(registry)) tools.push(...agentTools);

  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new Error(`duplicate MCP tool name ${tool.name}`);
    seen.add(tool.name);
  }
  return tools;
}
