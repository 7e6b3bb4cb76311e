// Coded failures of the file layer. Every message has the shape `<workdir>:<path> — <fixed phrase>`
// and echoes only what the caller sent (alias and workdir-relative path), never a host path,
// a temp name, file content, a query or a child name.

import { MountCrossingError, ReparsePointError, ShortNameError } from "../../platform/fs/sys-error.ts";
import { escapeControls } from "../common/escape.ts";
import { errnoCode, ServerfsError, type ErrorCode } from "../errors.ts";

const PHRASES: Partial<Record<ErrorCode, string>> = {
  PATH_OUTSIDE_WORKDIR: "path escapes the workdir",
  ACCESS_DENIED: "access denied",
  RESERVED_PATH: "path uses a name reserved by serverfs",
  HIDDEN_PATH_NOT_ALLOWED: "hidden paths are not allowed in this workdir",
  DENIED_PATH: "path is denied by policy",
  SYMLINK_NOT_ALLOWED: "path is or passes through a symlink",
  REPARSE_POINT_NOT_ALLOWED: "path is or passes through a reparse point (junction, mount point)",
  MOUNT_CROSSING_NOT_ALLOWED: "path is or passes through a mount point, and this workdir does not cross mounts",
  UNSUPPORTED_FILE_TYPE: "not a regular file (fifo, socket or device)",
  PATH_NOT_FOUND: "does not exist",
  NOT_A_FILE: "is a directory, not a file",
  NOT_A_DIRECTORY: "a path component is not a directory",
  RESOURCE_EXHAUSTED: "too many open files",
  BINARY_FILE: "file looks binary",
  UNSUPPORTED_TEXT_ENCODING: "file is not valid UTF-8",
  LINE_TOO_LARGE: "a line is larger than the read limit",
  FILE_CHANGED_DURING_READ: "file changed while it was being read",
  RESOURCE_TOO_LARGE: "file is larger than one resource read",
  SEARCH_TIMEOUT: "search exceeded its time limit",
  WORKDIR_READ_ONLY: "workdir is read-only",
  ROOT_MUTATION_NOT_ALLOWED: "the workdir root itself cannot be changed",
  PARENT_NOT_FOUND: "parent directory does not exist",
  PATH_ALREADY_EXISTS: "something already exists at this path",
  REVISION_CONFLICT: "expected_revision does not match the current revision",
  FILE_BUSY: "another serverfs writer is changing this directory; nothing changed, retry",
  EDIT_CONFLICT: "edit does not apply",
  TOO_MANY_EDITS: "too many edits in one call",
  WRITE_TOO_LARGE: "content is larger than the write limit",
  BINARY_CONTENT_NOT_ALLOWED: "content contains NUL or unpaired surrogates",
  MULTIPLE_HARDLINKS_NOT_SUPPORTED: "file has more than one hard link",
  METADATA_PRESERVATION_FAILED: "file metadata could not be preserved; nothing changed",
  DIRECTORY_NOT_EMPTY: "directory is not empty",
  MOVE_INTO_SELF: "a directory cannot be moved into itself or below itself",
  CROSS_DEVICE_MOVE: "source and destination are on different filesystems; a move never copies",
  MUTATION_IO_ERROR: "the filesystem refused the change",
  NO_SPACE_LEFT: "no space left on the filesystem, or the disk quota is used up",
  READ_ONLY_FILESYSTEM: "the filesystem is mounted read-only",
  IO_ERROR: "the filesystem reported an I/O error",
  BINARY_TRANSFER_DISABLED: "binary transfer is disabled for this workdir",
  BINARY_FILE_TOO_LARGE: "file is larger than the binary transfer limit",
  BINARY_PAYLOAD_TOO_LARGE: "payload is larger than the binary transfer limit",
  INVALID_BASE64: "data_base64 is not strict RFC 4648 base64",
  BINARY_SOURCE_REQUIRED: "data_base64 is required",
  EXPECTED_REVISION_REQUIRED: "overwrite=true requires expected_revision",
  EXPECTED_REVISION_NOT_ALLOWED: "expected_revision is only allowed with overwrite=true",
  INVALID_NAME: "path component is not a valid name",
  INVALID_PATH: "path ends in '/', '.' or '..' and so names a directory, not a file",
  NATIVE_PLATFORM_UNSUPPORTED: "this platform has no safe file backend",
  READ_BUDGET_EXCEEDED: "the byte budget of this read_multiple_files call is used up",
  DUPLICATE_PATH: "the same path appears earlier in this request",
  UNSUPPORTED_MEDIA_TYPE: "content is not a supported image or audio format",
  MEDIA_FILE_TOO_LARGE: "file is larger than the media read limit",
};

/** Longest caller-supplied path or alias echoed in a message; the rest is counted, not copied. */
const SHOWN_CHARS = 512;

/**
 * Render a caller-supplied path for a message: what can draw escaped (escapeControls), and cut after
 * SHOWN_CHARS characters so a multi-megabyte path cannot make an error answer several times
 * larger than the request (each escaped control character is 4 characters, then JSON-escaped).
 */
export function showPath(path: string): string {
  const head = path.length > SHOWN_CHARS ? path.slice(0, SHOWN_CHARS) : path;
  const shown = escapeControls(head);
  return path.length > SHOWN_CHARS ? `${shown}… (${path.length - SHOWN_CHARS} more characters)` : shown;
}

export function fail(code: ErrorCode, workdir: string, path: string, phrase?: string): ServerfsError {
  const text = phrase ?? PHRASES[code] ?? "request refused";
  return new ServerfsError(code, `${workdir}:${showPath(path)} — ${text}`);
}

export function workdirNotFound(alias: string): ServerfsError {
  return new ServerfsError("WORKDIR_NOT_FOUND", `'${showPath(alias)}' is not a configured workdir`);
}

export type OpenPurpose = "read" | "mutate" | "create";

/**
 * The filesystem's own faults, by errno: the same code from every tool and every step (open,
 * write, fsync, link, rename, unlink, read), so the caller learns what is wrong with the disk
 * rather than that "something" refused. docs/tools.md lists them ("Filesystem faults").
 */
export const FAULT_CODES = {
  ENOSPC: "NO_SPACE_LEFT",
  EDQUOT: "NO_SPACE_LEFT",
  EIO: "IO_ERROR",
  EROFS: "READ_ONLY_FILESYSTEM",
} as const satisfies Record<string, ErrorCode>;

/** A mutation fails before its one publishing step, or at it: the tree is as it was. */
const UNCHANGED = "; nothing was changed";

/**
 * The coded error for a filesystem fault (FAULT_CODES), or null when `err` is not one. `mutation`
 * adds that nothing was changed, which every mutation path guarantees (see publish.ts).
 */
export function faultFailure(err: unknown, workdir: string, path: string, mutation: boolean): ServerfsError | null {
  const errno = errnoCode(err);
  const code = errno !== undefined && Object.hasOwn(FAULT_CODES, errno) ? FAULT_CODES[errno as keyof typeof FAULT_CODES] : undefined;
  if (code === undefined) return null;
  return fail(code, workdir, path, `${PHRASES[code]}${mutation ? UNCHANGED : ""}`);
}

/**
 * Map an errno from opening/resolving a request path. `create` means the failing open was the
 * parent of a path being created (ENOENT → PARENT_NOT_FOUND).
 */
export function openFailure(err: unknown, workdir: string, path: string, purpose: OpenPurpose): ServerfsError {
  if (err instanceof ServerfsError) return err;
  if (err instanceof MountCrossingError) return fail("MOUNT_CROSSING_NOT_ALLOWED", workdir, path);
  if (err instanceof ReparsePointError) return fail("REPARSE_POINT_NOT_ALLOWED", workdir, path);
  if (err instanceof ShortNameError) return fail("INVALID_NAME", workdir, path, "an 8.3 short name is not allowed where it names a longer name; use the long name");
  const fault = faultFailure(err, workdir, path, purpose !== "read");
  if (fault !== null) return fault;
  switch (errnoCode(err)) {
    case "ELOOP":
      return fail("SYMLINK_NOT_ALLOWED", workdir, path);
    case "ENOENT":
      return purpose === "create" ? fail("PARENT_NOT_FOUND", workdir, path) : fail("PATH_NOT_FOUND", workdir, path, "does not exist");
    case "ENOTDIR":
      return fail("NOT_A_DIRECTORY", workdir, path);
    case "EXDEV":
      return fail("PATH_OUTSIDE_WORKDIR", workdir, path);
    case "EMFILE":
    case "ENFILE":
      return fail("RESOURCE_EXHAUSTED", workdir, path);
    case "ENXIO":
      return fail("UNSUPPORTED_FILE_TYPE", workdir, path);
    case "ENAMETOOLONG":
      return fail("INVALID_NAME", workdir, path, "name too long");
    case "EACCES":
    case "EPERM":
      return fail("ACCESS_DENIED", workdir, path);
    default:
      return purpose === "read" ? fail("ACCESS_DENIED", workdir, path) : fail("MUTATION_IO_ERROR", workdir, path);
  }
}

/** A mutation syscall failed for a reason that is not a policy decision. */
export function mutationFailure(err: unknown, workdir: string, path: string): ServerfsError {
  if (err instanceof ServerfsError) return err;
  if (err instanceof MountCrossingError) return fail("MOUNT_CROSSING_NOT_ALLOWED", workdir, path);
  if (err instanceof ReparsePointError || err instanceof ShortNameError) return openFailure(err, workdir, path, "mutate");
  const fault = faultFailure(err, workdir, path, true);
  if (fault !== null) return fault;
  const code = errnoCode(err);
  if (code === "EACCES" || code === "EPERM") return fail("ACCESS_DENIED", workdir, path, `access denied${UNCHANGED}`);
  if (code === "EMFILE" || code === "ENFILE") return fail("RESOURCE_EXHAUSTED", workdir, path);
  return fail("MUTATION_IO_ERROR", workdir, path, `the filesystem refused the change (${code ?? "error"})`);
}
