// Public surface of the file layer (no MCP types).
export { createFileService, DEFAULT_MAX_LINES, type FileService, type PublishedLimits, type WorkdirSummary } from "./service.ts";
export { processMutationGate, type MutationGate } from "./gate.ts";
export type { ListDirectoryOutput, ListEntry } from "./list.ts";
export type { FindOutput } from "./find.ts";
export type { SearchMatch, SearchOutput } from "./search.ts";
export type { ReadTextOutput } from "./read.ts";
export type { TailTextOutput } from "./tail.ts";
export type { ReadManyEntry, ReadManyOutput } from "./read-many.ts";
export type { MediaOutput } from "./media.ts";
export type { StatOutput } from "./stat.ts";
export type { CreateTextOutput } from "./create.ts";
export type { EditTextOutput, TextEdit } from "./edit.ts";
export type { DeleteFileOutput } from "./delete.ts";
export type { CreateDirectoryOutput, DeleteDirectoryOutput } from "./directory.ts";
export type { BinaryMeta, UploadOutput } from "./binary.ts";
export { REVISION_PATTERN } from "./revision.ts";
export { MAX_GLOB_CHARS } from "./glob.ts";
