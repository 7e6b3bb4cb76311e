// The one place the tool list is assembled (docs/tools.md): a tool is listed only where it can do
// something. Read tools always; the mutation tools (move_file included) only when a workdir is read-write;
// download only when a workdir enables binary transfer, upload only when one workdir is both
// read-write and binary-enabled; agent tools only when the Agent Bridge is enabled and a workdir
// allows a runtime.
import type { Registry } from "../config/types.ts";
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

export function hasWritableWorkdir(registry: Registry): boolean {
  return registry.workdirs.some((w) => !w.read_only);
}

export function hasBinaryWorkdir(registry: Registry): boolean {
  return registry.workdirs.some((w) => w.binary_transfer_enabled);
}

export function hasWritableBinaryWorkdir(registry: Registry): boolean {
  return registry.workdirs.some((w) => !w.read_only && w.binary_transfer_enabled);
}

/** Agent tools are offered only when the Bridge is enabled and some workdir allows a runtime. */
export function agentSurfaceEnabled(registry: Registry): boolean {
  return registry.agent.enabled && registry.workdirs.some((w) => w.agent_mode !== "disabled" && w.agent_runtimes.length > 0);
}

export function buildToolSurface(registry: Registry, deps: FsToolDeps, agentTools: readonly McpTool[] = []): McpTool[] {
  const tools: McpTool[] = [
    listWorkdirsTool(deps),
    listDirectoryTool(deps),
    directoryTreeTool(deps),
    findFilesTool(deps),
    searchTextTool(deps),
    readTextFileTool(deps),
    statFileTool(deps),
    readMultipleFilesTool(deps),
    readMediaFileTool(deps),
  ];
  if (hasWritableWorkdir(registry)) {
    tools.push(
      createTextFileTool(deps),
      editTextFileTool(deps),
      deleteFileTool(deps),
      createDirectoryTool(deps),
      deleteDirectoryTool(deps),
      moveFileTool(deps),
    );
  }
  if (hasBinaryWorkdir(registry)) tools.push(downloadBinaryFileTool(deps));
  if (hasWritableBinaryWorkdir(registry)) tools.push(uploadBinaryFileTool(deps));
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
