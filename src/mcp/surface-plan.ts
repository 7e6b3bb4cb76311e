// Which tools a deployment lists, and in which order (docs/tools.md): a tool is listed only where
// it can do something. Read tools always; the mutation tools (move_file included) only when a
// workdir is read-write; download only when a workdir enables binary transfer, upload only when
// one workdir is both read-write and binary-enabled; agent tools only when the Agent Bridge is
// enabled and a workdir allows a runtime. Names only: this module imports no tool, so serve can
// answer its first tools/list before the tools are loaded (src/mcp/opening.ts); surface.ts builds
// the tools themselves from the same list.
import type { Registry } from "../config/types.ts";

export const READ_TOOL_NAMES = [
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

export const WRITE_TOOL_NAMES = [
  "create_text_file",
  "edit_text_file",
  "delete_file",
  "create_directory",
  "delete_directory",
  "move_file",
] as const;

export type FileToolName = (typeof READ_TOOL_NAMES)[number] | (typeof WRITE_TOOL_NAMES)[number] | "download_binary_file" | "upload_binary_file";

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

/** The file tools this deployment lists, in tools/list order (the agent tools, if any, follow them). */
export function fileToolNames(registry: Registry): FileToolName[] {
  const names: FileToolName[] = [...READ_TOOL_NAMES];
  if (hasWritableWorkdir(registry)) names.push(...WRITE_TOOL_NAMES);
  if (hasBinaryWorkdir(registry)) names.push("download_binary_file");
  if (hasWritableBinaryWorkdir(registry)) names.push("upload_binary_file");
  return names;
}
