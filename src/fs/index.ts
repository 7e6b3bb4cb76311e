// Public surface of the file layer (no MCP types).
export { createFileService, DEFAULT_MAX_LINES, type FileService, type PublishedLimits, type WorkdirSummary } from "./service.ts";
export { processMutationGate, type MutationGate } from "./gate.ts";
export type { ListDirectoryOutput, ListEntry } from "./list.ts";
export type { FindOutput } from "./find.ts";
export { DEFAULT_TREE_DEPTH, MAX_TREE_DEPTH, type DirectoryTreeOutput, type TreeNode } from "./tree.ts";
export type { SearchMatch, SearchOutput } from "./search.ts";
export type { ReadTextOutput } from "./read.ts";
export type { StatOutput } from "./stat.ts";
export type { CreateTextOutput } from "./create.ts";
export type { EditTextOutput, TextEdit } from "./edit.ts";
export { DIFF_MAX_BYTES, DIFF_MAX_EDIT_LINES } from "./edit-diff.ts";
export type { DeleteFileOutput } from "./delete.ts";
export type { CreateDirectoryOutput, DeleteDirectoryOutput } from "./directory.ts";
export type { BinaryMeta, UploadOutput } from "./binary.ts";
export { REVISION_PATTERN } from "./revision.ts";
export { MAX_GLOB_CHARS } from "./glob.ts";
