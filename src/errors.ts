// One error type for everything serverfs refuses on purpose. `code` is a stable string that
// callers match on; `message` says what was wrong in terms of the caller's own input and never
// contains a host path, file content, a query or a secret. Anything that is not a ServerfsError
// when it reaches a boundary is normalised by `toServerfsError`, which deliberately drops the
// original message (it may contain a host path).
import { installPlatformErrorMapper, PlatformError, type PlatformErrorCode, type PlatformFailure } from "../platform/errors.ts";

export const FS_ERROR_CODES = [
  "WORKDIR_NOT_FOUND",
  "PATH_OUTSIDE_WORKDIR",
  "ACCESS_DENIED",
  "RESERVED_PATH",
  "HIDDEN_PATH_NOT_ALLOWED",
  "DENIED_PATH",
  "SYMLINK_NOT_ALLOWED",
  "REPARSE_POINT_NOT_ALLOWED",
  "MOUNT_CROSSING_NOT_ALLOWED",
  "INVALID_NAME",
  "INVALID_PATH",
  "UNSUPPORTED_FILE_TYPE",
  "PATH_NOT_FOUND",
  "NOT_A_FILE",
  "NOT_A_DIRECTORY",
  "RESOURCE_EXHAUSTED",
  "BINARY_FILE",
  "UNSUPPORTED_TEXT_ENCODING",
  "LINE_TOO_LARGE",
  "FILE_CHANGED_DURING_READ",
  "RESOURCE_TOO_LARGE",
  "READ_FAILED",
  "SEARCH_TIMEOUT",
  "SEARCH_FAILED",
  "WORKDIR_READ_ONLY",
  "ROOT_MUTATION_NOT_ALLOWED",
  "PARENT_NOT_FOUND",
  "PATH_ALREADY_EXISTS",
  "REVISION_CONFLICT",
  "FILE_BUSY",
  "EDIT_CONFLICT",
  "TOO_MANY_EDITS",
  "WRITE_TOO_LARGE",
  "BINARY_CONTENT_NOT_ALLOWED",
  "MULTIPLE_HARDLINKS_NOT_SUPPORTED",
  "METADATA_PRESERVATION_FAILED",
  "DIRECTORY_NOT_EMPTY",
  "MOVE_INTO_SELF",
  "CROSS_DEVICE_MOVE",
  "MUTATION_IO_ERROR",
  "NO_SPACE_LEFT",
  "READ_ONLY_FILESYSTEM",
  // Also a process code (below): there the CLI and platform/ name one of serverfs's own files by
  // its label; from a file tool it names only the caller's path. One code, one meaning: the OS
  // reported an I/O error.
  "IO_ERROR",
  "BINARY_TRANSFER_DISABLED",
  "BINARY_FILE_TOO_LARGE",
  "BINARY_PAYLOAD_TOO_LARGE",
  "INVALID_BASE64",
  "BINARY_SOURCE_REQUIRED",
  "BINARY_SOURCE_CONFLICT",
  "EXPECTED_REVISION_REQUIRED",
  "EXPECTED_REVISION_NOT_ALLOWED",
  "NATIVE_PLATFORM_UNSUPPORTED",
  "INVALID_ARGUMENT",
  "READ_BUDGET_EXCEEDED",
  "DUPLICATE_PATH",
  "UNSUPPORTED_MEDIA_TYPE",
  "MEDIA_FILE_TOO_LARGE",
] as const;

export const AGENT_ERROR_CODES = [
  "INVALID_REQUEST",
  "METHOD_NOT_FOUND",
  "PROTOCOL_VERSION_UNSUPPORTED",
  "REQUEST_TOO_LARGE",
  "RESPONSE_TOO_LARGE",
  "BRIDGE_PROTOCOL_ERROR",
  "PEER_NOT_AUTHORIZED",
  "CONNECTION_LIMIT_REACHED",
  "CONNECTION_IDLE_TIMEOUT",
  "REQUEST_LINE_TIMEOUT",
  "CONNECTION_QUEUE_FULL",
  "SOCKET_PATH_IN_USE",
  "SOCKET_DIRECTORY_UNSAFE",
  "BRIDGE_CLOSED",
  "BRIDGE_IDENTITY_UNAVAILABLE",
  "BRIDGE_CONFIG_INVALID",
  "BRIDGE_ALREADY_RUNNING",
  "STATE_DATABASE_TOO_NEW",
  "STATE_DIRECTORY_UNSAFE",
  "INVALID_WORKDIR_PATH",
  "WORKDIR_PATH_NOT_FOUND",
  "WORKDIR_BUSY",
  "WORKDIR_OVERLAP",
  "WORKDIR_RECOVERY_REQUIRED",
  "LOCK_PATH_UNSAFE",
  "AGENT_LOCK_UNAVAILABLE",
  "AGENT_DISABLED",
  "AGENT_RUNTIME_NOT_ALLOWED",
  "AGENT_PROFILE_NOT_ALLOWED",
  "AGENT_RUNTIME_UNAVAILABLE",
  "AGENT_RUNTIME_NOT_READY",
  "AGENT_PROMPT_TOO_LARGE",
  "AGENT_MESSAGE_TOO_LARGE",
  "AGENT_INTERACTION_TOO_LARGE",
  "AGENT_EVENT_TOO_LARGE",
  "AGENT_EVENT_LIMIT_REACHED",
  "AGENT_TASK_LIMIT_REACHED",
  "AGENT_TASK_NOT_FOUND",
  "AGENT_TASK_EXISTS",
  "AGENT_TASK_TERMINAL",
  "AGENT_TASK_NOT_ACTIVE",
  "AGENT_SESSION_NOT_RESUMABLE",
  "AGENT_IDEMPOTENCY_CONFLICT",
  "AGENT_PROVIDER_ERROR",
  "AGENT_PROVIDER_DISCONNECTED",
  "AGENT_IDLE_TIMEOUT",
  "AGENT_PROVIDER_INACTIVE",
  "AGENT_TASK_TIMED_OUT",
  "AGENT_INTERACTION_TIMED_OUT",
  "AGENT_INTERACTION_EXPIRED",
  "AGENT_RESULT_TOO_LARGE",
  "AGENT_RESULT_NOT_RETRIEVABLE",
  "AGENT_RESULT_STORAGE_ERROR",
  "NO_SPACE_LEFT",
  "INVALID_RESULT_OFFSET",
  "INVALID_RESULT_LIMIT",
  "INVALID_LIMIT",
  "INVALID_TASK_TRANSITION",
  "REQUEST_NOT_FOUND",
  "REQUEST_ALREADY_RESOLVED",
  "REQUEST_STALE",
  "REQUEST_PENDING",
  "REQUEST_EXISTS",
  "INVALID_APPROVAL_DECISION",
  "INVALID_QUESTION_ANSWER",
  "APPROVAL_PATH_NOT_ALLOWED",
  "PERMISSION_OUTSIDE_POLICY",
  "BRIDGE_SHUTDOWN",
  "BRIDGE_RESTARTED",
  "BRIDGE_SCHEDULING_FAILED",
  "AGENT_BRIDGE_UNAVAILABLE",
  "AGENT_BRIDGE_PROTOCOL_ERROR",
  "AGENT_BRIDGE_CONFIG_STALE",
  "BRIDGE_NOT_AUTHENTIC",
  "AGENT_BRIDGE_ERROR",
  "AGENT_ACP_PROTOCOL_UNSUPPORTED",
  "AGENT_ACP_LAUNCH_FAILED",
  "AGENT_ACP_PROTOCOL_ERROR",
  "AGENT_AUTH_REQUIRED",
  "AGENT_CONTINUATION_UNSUPPORTED",
  "AGENT_MODEL_UNSUPPORTED",
] as const;

export const PROCESS_ERROR_CODES = [
  "CONFIGURATION_ERROR",
  "USAGE_ERROR",
  "IO_ERROR",
  "STOP_NOT_PROVED",
  "SPAWN_FAILED",
  "PLATFORM_UNSUPPORTED",
  "INTERNAL_ERROR",
  "SERVICE_MANAGER_UNAVAILABLE",
  "SERVICE_MANAGER_FAILED",
  "SERVICE_ROOT_REFUSED",
  "HOST_CONFIG_INVALID",
  "HOST_ENTRY_EXISTS",
  "HOST_CONFIG_UNEDITABLE",
] as const;

export type FsErrorCode = (typeof FS_ERROR_CODES)[number];
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];
export type ProcessErrorCode = (typeof PROCESS_ERROR_CODES)[number];
export type ErrorCode = FsErrorCode | AgentErrorCode | ProcessErrorCode;

const KNOWN_CODES: ReadonlySet<string> = new Set<string>([
  ...FS_ERROR_CODES,
  ...AGENT_ERROR_CODES,
  ...PROCESS_ERROR_CODES,
]);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && KNOWN_CODES.has(value);
}

export class ServerfsError extends Error {
  override readonly name = "ServerfsError";
  readonly code: ErrorCode;
  /** Machine-readable extras that are safe to show a caller (never host paths or secrets). */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.details = details;
  }

  /** The wire text form used by MCP tool errors and CLI diagnostics: `CODE: detail`. */
  toText(): string {
    return `${this.code}: ${this.message}`;
  }
}

/**
 * Turn anything thrown into a ServerfsError. Foreign errors become `fallback` with a fixed
 * message: their own text may name a host path, so it is never forwarded.
 */
export function toServerfsError(
  err: unknown,
  fallback: ErrorCode = "INTERNAL_ERROR",
  fallbackMessage = "unexpected internal error",
): ServerfsError {
  if (err instanceof ServerfsError) return err;
  if (err instanceof PlatformError) return fromPlatformError(err.code, err.message);
  return new ServerfsError(fallback, fallbackMessage);
}

/**
 * The one mapping from the platform layer's errors (platform/errors.ts) to ours: same code, same
 * message. Installed below as the platform's error constructor, so what platform/ throws into
 * src/ is already a ServerfsError; passing `code` to the constructor also checks at compile time
 * that every platform code is one of ours.
 */
export function fromPlatformError(code: PlatformErrorCode, message: string): ServerfsError & PlatformFailure {
  return new ServerfsError(code, message) as ServerfsError & PlatformFailure;
}

installPlatformErrorMapper(fromPlatformError);

/** errno name of a Node/Bun system error, if any. */
export function errnoCode(err: unknown): string | undefined {
  if (err && typeof err === "object" && "code" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}
