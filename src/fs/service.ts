// The file service the MCP front end calls: one method per tool, each returning exactly that
// tool's structuredContent and throwing ServerfsError with the documented codes. No MCP types here.

import type { AgentMode, Registry } from "../config/types.ts";
import { fail, faultFailure } from "./fail.ts";
import { Workspace, type Target } from "./context.ts";
import { createTextFile, type CreateTextOutput } from "./create.ts";
import { deleteFile, type DeleteFileOutput } from "./delete.ts";
import { createDirectory, deleteDirectory, type CreateDirectoryOutput, type DeleteDirectoryOutput } from "./directory.ts";
import { downloadBinaryFile, uploadBinaryFile, type BinaryMeta, type UploadOutput } from "./binary.ts";
import { editTextFile, type EditTextOutput, type TextEdit } from "./edit.ts";
import { findFiles, type FindOutput } from "./search/index.ts";
import { processMutationGate, type MutationGate } from "./gate.ts";
import { listDirectory, type ListDirectoryOutput } from "./list.ts";
import { moveFile, type MoveOutput } from "./move.ts";
import { fsNative, type FsNative } from "../../platform/fs/native.ts";
import { clampLimit } from "./order.ts";
import { DEFAULT_MAX_LINES, publishedLimits, type PublishedLimits } from "./published-limits.ts";
import { readResource, readTextFile, type ReadTextOutput } from "./read.ts";
import { readMultipleFiles, type ReadManyOutput } from "./read-many.ts";
import { readMediaFile, type MediaOutput } from "./media.ts";
import { readTailLines, type TailTextOutput } from "./tail.ts";
import { checkSearchRequest, searchText, type SearchOutput } from "./search/index.ts";
import { statFile, type StatOutput } from "./stat.ts";
import type { WalkFilterArgs } from "./walk-filter.ts";
import { sweepWorkdirs, type SweepBounds, type SweepReport } from "./temp-sweep.ts";
import { DEFAULT_TREE_DEPTH, directoryTree, MAX_TREE_DEPTH, type DirectoryTreeOutput } from "./tree.ts";

export { DEFAULT_MAX_LINES, type PublishedLimits } from "./published-limits.ts";

/** The walk filters find_files, search_text and directory_tree take (./walk-filter.ts). */
export interface WalkFilterParams {
  include_ignored?: boolean;
  exclude?: string[];
}

function walkFilter(t: Target, a: WalkFilterParams): WalkFilterArgs {
  if (a.include_ignored !== undefined && typeof a.include_ignored !== "boolean") throw fail("INVALID_ARGUMENT", t.alias, t.rel, "include_ignored must be a boolean");
  if (a.exclude !== undefined && !Array.isArray(a.exclude)) throw fail("INVALID_ARGUMENT", t.alias, t.rel, "exclude must be a list of globs");
  return { includeIgnored: a.include_ignored === true, exclude: a.exclude ?? [] };
}

export interface WorkdirSummary {
  alias: string;
  description: string | null;
  access: "read-only" | "read-write";
  binary_transfer: boolean;
  agent_mode: AgentMode;
  agent_runtimes: string[];
}


export interface FileService {
  listWorkdirs(): { workdirs: WorkdirSummary[] };
  listDirectory(a: { workdir: string; path?: string; offset?: number; limit?: number }): Promise<ListDirectoryOutput>;
  findFiles(a: { workdir: string; pattern: string; path?: string; limit?: number } & WalkFilterParams, signal?: AbortSignal): Promise<FindOutput>;
  directoryTree(a: { workdir: string; path?: string; max_depth?: number; limit?: number } & WalkFilterParams, signal?: AbortSignal): Promise<DirectoryTreeOutput>;
  searchText(
    a: {
      workdir: string;
      query: string;
      path?: string;
      glob?: string | null;
      case_sensitive?: boolean;
      limit?: number;
      regex?: boolean;
      context_lines?: number;
    } & WalkFilterParams,
    signal?: AbortSignal,
  ): Promise<SearchOutput>;
  readTextFile(
    a: { workdir: string; path: string; start_line?: number; max_lines?: number; tail_lines?: number },
    signal?: AbortSignal,
  ): Promise<ReadTextOutput | TailTextOutput>;
  readMultipleFiles(a: { workdir: string; paths: string[]; max_lines?: number }, signal?: AbortSignal): Promise<ReadManyOutput>;
  readMediaFile(a: { workdir: string; path: string }): Promise<{ meta: MediaOutput; bytes: Buffer }>;
  statFile(a: { workdir: string; path: string }): Promise<StatOutput>;
  createTextFile(a: { workdir: string; path: string; content: string }): Promise<CreateTextOutput>;
  editTextFile(a: { workdir: string; path: string; expected_revision: string; edits: TextEdit[]; dry_run?: boolean }): Promise<EditTextOutput>;
  deleteFile(a: { workdir: string; path: string; expected_revision: string }): Promise<DeleteFileOutput>;
  createDirectory(a: { workdir: string; path: string }): Promise<CreateDirectoryOutput>;
  deleteDirectory(a: { workdir: string; path: string; expected_revision: string }): Promise<DeleteDirectoryOutput>;
  moveFile(a: { workdir: string; source: string; destination: string; expected_revision: string }): Promise<MoveOutput>;
  downloadBinaryFile(a: { workdir: string; path: string }): Promise<{ meta: BinaryMeta; bytes: Uint8Array }>;
  uploadBinaryFile(a: {
    workdir: string;
    path: string;
    data_base64: string | null;
    overwrite?: boolean;
    expected_revision?: string | null;
  }): Promise<UploadOutput>;
  readResource(a: { workdir: string; path: string }): Promise<{ text: string; mime_type: "text/plain" }>;
  limits(): PublishedLimits;
  /**
   * Remove the temps that dead writers left in the read-write workdirs, in one bounded pass
   * (./temp-sweep.ts). serve runs it once, after answering `initialize`. Never throws.
   */
  sweepTemps(bounds?: SweepBounds): Promise<SweepReport>;
  /** Close the cached workdir root descriptors (shutdown, tests). */
  close(): void;
}

function requireString(t: Target, value: unknown, name: string): string {
  if (typeof value !== "string") throw fail("INVALID_ARGUMENT", t.alias, t.rel, `${name} must be a string`);
  return value;
}

function nonNegativeInt(t: Target, value: number | undefined, name: string, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (!Number.isInteger(value) || value < 0) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `${name} must be an integer >= 0`);
  return value;
}

function positiveIntOrUndefined(t: Target, value: number | undefined, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 1) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `${name} must be an integer >= 1`);
  return value;
}

/**
 * The one net under every operation: a filesystem fault (ENOSPC, EDQUOT, EIO, EROFS) that escaped
 * an operation from a step without its own mapping (a read, an fstat, a read of the file being
 * edited) still gets its code against the caller's path, never INTERNAL_ERROR.
 */
async function coded<T>(t: Target, mutation: boolean, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw faultFailure(err, t.alias, t.rel, mutation) ?? err;
  }
}

export interface FileServiceOptions {
  gate?: MutationGate;
  /**
   * The OS backend: tests wrap the real one to act at an exact step (e.g. right before a rename),
   * or run another OS's backend logic (the macOS backend over Linux calls).
   */
  native?: FsNative;
}

export function createFileService(registry: Registry, options: FileServiceOptions = {}): FileService {
  const gate = options.gate ?? processMutationGate();
  let workspace: Workspace | null = null;
  const ws = (): Workspace => {
    if (workspace === null) workspace = new Workspace(registry, options.native ?? fsNative());
    return workspace;
  };
  const limits = registry.limits;

  return {
    listWorkdirs() {
      return {
        workdirs: registry.workdirs.map((w) => ({
          alias: w.alias,
          description: w.description,
          access: w.read_only ? ("read-only" as const) : ("read-write" as const),
          binary_transfer: w.binary_transfer_enabled,
          agent_mode: w.agent_mode,
          agent_runtimes: [...w.agent_runtimes],
        })),
      };
    },

    async listDirectory(a) {
      const t = ws().prepare(a.workdir, a.path);
      const offset = nonNegativeInt(t, a.offset, "offset", 0);
      const limit = clampLimit(positiveIntOrUndefined(t, a.limit, "limit"), limits.default_list_limit, limits.max_list_entries);
      return coded(t, false, () => listDirectory(ws(), t, offset, limit));
    },

    async findFiles(a, signal) {
      const t = ws().prepare(a.workdir, a.path);
      const pattern = requireString(t, a.pattern, "pattern");
      const limit = clampLimit(positiveIntOrUndefined(t, a.limit, "limit"), limits.default_search_results, limits.max_search_results);
      return coded(t, false, () => findFiles(ws(), t, pattern, limit, signal, walkFilter(t, a)));
    },

    async directoryTree(a, signal) {
      const t = ws().prepare(a.workdir, a.path);
      const maxDepth = clampLimit(positiveIntOrUndefined(t, a.max_depth, "max_depth"), DEFAULT_TREE_DEPTH, MAX_TREE_DEPTH);
      const limit = clampLimit(positiveIntOrUndefined(t, a.limit, "limit"), limits.max_list_entries, limits.max_list_entries);
      return coded(t, false, () => directoryTree(ws(), t, maxDepth, limit, signal, walkFilter(t, a)));
    },

    async searchText(a, signal) {
      const t = ws().prepare(a.workdir, a.path);
      const req = checkSearchRequest(t, a, limits);
      return coded(t, false, () => searchText(ws(), t, req, signal));
    },

    async readTextFile(a, signal) {
      const t = ws().prepare(a.workdir, a.path, { file: true });
      const tail = positiveIntOrUndefined(t, a.tail_lines, "tail_lines");
      if (tail !== undefined) {
        if (a.start_line !== undefined || a.max_lines !== undefined) {
          throw fail("INVALID_ARGUMENT", t.alias, t.rel, "tail_lines cannot be combined with start_line or max_lines");
        }
        return coded(t, false, () => readTailLines(ws(), t, Math.min(tail, t.wd.workdir.max_read_lines), signal));
      }
      const startLine = positiveIntOrUndefined(t, a.start_line, "start_line") ?? 1;
      const maxLines = clampLimit(positiveIntOrUndefined(t, a.max_lines, "max_lines"), DEFAULT_MAX_LINES, t.wd.workdir.max_read_lines);
      return coded(t, false, () => readTextFile(ws(), t, startLine, maxLines, signal));
    },

    async readMultipleFiles(a, signal) {
      const wd = ws().lookup(a.workdir);
      if (!Array.isArray(a.paths) || a.paths.length < 1 || a.paths.length > limits.max_files_per_read) {
        throw fail("INVALID_ARGUMENT", a.workdir, "", `paths must list 1 to ${limits.max_files_per_read} paths`);
      }
      const requested = a.max_lines ?? undefined;
      if (requested !== undefined && (!Number.isInteger(requested) || requested < 1)) {
        throw fail("INVALID_ARGUMENT", a.workdir, "", "max_lines must be an integer >= 1");
      }
      return readMultipleFiles(
        ws(),
        wd.workdir.alias,
        a.paths,
        (p) => ws().prepare(a.workdir, p, { file: true }),
        (t) => clampLimit(requested, DEFAULT_MAX_LINES, t.wd.workdir.max_read_lines),
        signal,
      );
    },

    async readMediaFile(a) {
      const t = ws().prepare(a.workdir, a.path, { file: true });
      return coded(t, false, async () => readMediaFile(ws(), t, limits.max_media_bytes));
    },

    async statFile(a) {
      const t = ws().prepare(a.workdir, a.path);
      return coded(t, false, async () => statFile(ws(), t));
    },

    async createTextFile(a) {
      const t = ws().prepare(a.workdir, a.path, { mutation: true, file: true });
      const content = requireString(t, a.content, "content");
      return coded(t, true, () => createTextFile(ws(), gate, t, content));
    },

    async editTextFile(a) {
      const t = ws().prepare(a.workdir, a.path, { mutation: true, file: true });
      if (a.dry_run !== undefined && typeof a.dry_run !== "boolean") throw fail("INVALID_ARGUMENT", t.alias, t.rel, "dry_run must be a boolean");
      const expected = requireString(t, a.expected_revision, "expected_revision");
      return coded(t, a.dry_run !== true, () => editTextFile(ws(), gate, t, expected, a.edits, { dryRun: a.dry_run === true }));
    },

    async deleteFile(a) {
      const t = ws().prepare(a.workdir, a.path, { mutation: true, file: true });
      const expected = requireString(t, a.expected_revision, "expected_revision");
      return coded(t, true, () => deleteFile(ws(), gate, t, expected));
    },

    async createDirectory(a) {
      const t = ws().prepare(a.workdir, a.path, { mutation: true });
      return coded(t, true, () => createDirectory(ws(), gate, t));
    },

    async deleteDirectory(a) {
      const t = ws().prepare(a.workdir, a.path, { mutation: true });
      const expected = requireString(t, a.expected_revision, "expected_revision");
      return coded(t, true, () => deleteDirectory(ws(), gate, t, expected));
    },

    async moveFile(a) {
      const src = ws().prepare(a.workdir, a.source, { mutation: true });
      const dst = ws().prepare(a.workdir, a.destination, { mutation: true });
      const expected = requireString(src, a.expected_revision, "expected_revision");
      return coded(src, true, () => moveFile(ws(), gate, src, dst, expected));
    },

    async downloadBinaryFile(a) {
      const t = ws().prepare(a.workdir, a.path, { binary: true, file: true });
      return coded(t, false, async () => downloadBinaryFile(ws(), t));
    },

    async uploadBinaryFile(a) {
      const t = ws().prepare(a.workdir, a.path, { mutation: true, binary: true, file: true });
      return coded(t, true, () => uploadBinaryFile(ws(), gate, t, a.data_base64, a.overwrite ?? false, a.expected_revision));
    },

    async readResource(a) {
      const t = ws().prepare(a.workdir, a.path, { file: true });
      return coded(t, false, () => readResource(ws(), t));
    },

    limits() {
      return publishedLimits(registry);
    },

    sweepTemps(bounds) {
      return sweepWorkdirs(ws(), gate, bounds);
    },

    close() {
      workspace?.close();
    },
  };
}
