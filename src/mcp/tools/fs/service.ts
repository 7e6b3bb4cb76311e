// The slice of the filesystem service (src/fs) the file tools consume, stated structurally so the
// MCP layer names exactly what it relies on: each method takes the tool's parsed arguments and
// returns the tool's structuredContent object, throwing ServerfsError with the tool's codes.
import type { z } from "zod";
import type { Awaitable, FsToolLimits } from "./common.ts";
import type { createDirectoryInput, createDirectoryOutput } from "./create-directory.ts";
import type { createTextFileInput, createTextFileOutput } from "./create-text-file.ts";
import type { deleteDirectoryInput, deleteDirectoryOutput } from "./delete-directory.ts";
import type { deleteFileInput, deleteFileOutput } from "./delete-file.ts";
import type { downloadBinaryFileInput, downloadBinaryFileOutput } from "./download-binary-file.ts";
import type { editTextFileInput, editTextFileOutput } from "./edit-text-file.ts";
import type { findFilesInput, findFilesOutput } from "./find-files.ts";
import type { listDirectoryInput, listDirectoryOutput } from "./list-directory.ts";
import type { listWorkdirsOutput } from "./list-workdirs.ts";
import type { readTextFileInput, readTextFileOutput } from "./read-text-file.ts";
import type { searchTextInput, searchTextOutput } from "./search-text.ts";
import type { statFileInput, statFileOutput } from "./stat-file.ts";
import type { uploadBinaryFileInput, uploadBinaryFileOutput } from "./upload-binary-file.ts";

type In<T extends z.ZodType> = z.output<T>;
type Out<T extends z.ZodType> = z.input<T>;
type InOf<F extends (...a: never[]) => z.ZodType> = z.output<ReturnType<F>>;

export interface FileServiceApi {
  listWorkdirs(): Awaitable<Out<typeof listWorkdirsOutput>>;
  listDirectory(args: InOf<typeof listDirectoryInput>): Awaitable<Out<typeof listDirectoryOutput>>;
  findFiles(args: InOf<typeof findFilesInput>): Awaitable<Out<typeof findFilesOutput>>;
  searchText(args: InOf<typeof searchTextInput>, signal?: AbortSignal): Awaitable<Out<typeof searchTextOutput>>;
  readTextFile(args: InOf<typeof readTextFileInput>): Awaitable<Out<typeof readTextFileOutput>>;
  statFile(args: In<typeof statFileInput>): Awaitable<Out<typeof statFileOutput>>;
  createTextFile(args: In<typeof createTextFileInput>): Awaitable<Out<typeof createTextFileOutput>>;
  editTextFile(args: InOf<typeof editTextFileInput>): Awaitable<Out<typeof editTextFileOutput>>;
  deleteFile(args: In<typeof deleteFileInput>): Awaitable<Out<typeof deleteFileOutput>>;
  createDirectory(args: In<typeof createDirectoryInput>): Awaitable<Out<typeof createDirectoryOutput>>;
  deleteDirectory(args: In<typeof deleteDirectoryInput>): Awaitable<Out<typeof deleteDirectoryOutput>>;
  downloadBinaryFile(
    args: In<typeof downloadBinaryFileInput>,
  ): Awaitable<{ meta: Out<typeof downloadBinaryFileOutput>; bytes: Uint8Array }>;
  uploadBinaryFile(args: In<typeof uploadBinaryFileInput>): Awaitable<Out<typeof uploadBinaryFileOutput>>;
  /** The resource template's read: all-or-nothing text of a file (RESOURCE_TOO_LARGE past the workdir maximum). */
  readResource(args: { workdir: string; path: string }): Awaitable<{ text: string; mime_type: string }>;
  limits(): FsToolLimits;
}

export interface FsToolDeps {
  files: FileServiceApi;
  limits: FsToolLimits;
}
