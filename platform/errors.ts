// The platform layer's own error vocabulary. platform/ imports nothing from src/, so it cannot
// throw ServerfsError itself; it raises a PlatformError whose code is one of the few below, each
// of which is also a serverfs error code with the same meaning (src/errors.ts checks that at
// compile time). The application maps these to its own error type in one place: src/errors.ts
// installs its mapper once, at load, so every platform error that reaches src/ is already a
// ServerfsError with the same code and message; toServerfsError maps any PlatformError raised
// before that. See docs/platform.md ("Errors").

export const PLATFORM_ERROR_CODES = [
  "INVALID_ARGUMENT",
  "IO_ERROR",
  "SPAWN_FAILED",
  "PLATFORM_UNSUPPORTED",
  "NATIVE_PLATFORM_UNSUPPORTED",
  "LOCK_PATH_UNSAFE",
  "AGENT_LOCK_UNAVAILABLE",
  "STATE_DIRECTORY_UNSAFE",
  "BRIDGE_IDENTITY_UNAVAILABLE",
  "SOCKET_PATH_IN_USE",
  "SOCKET_DIRECTORY_UNSAFE",
  "SERVICE_MANAGER_UNAVAILABLE",
  "SERVICE_MANAGER_FAILED",
] as const;

export type PlatformErrorCode = (typeof PLATFORM_ERROR_CODES)[number];

/** What platform code throws and inspects: an Error carrying one of the codes above. */
export interface PlatformFailure extends Error {
  readonly code: PlatformErrorCode;
}

export class PlatformError extends Error implements PlatformFailure {
  override readonly name = "PlatformError";
  constructor(
    readonly code: PlatformErrorCode,
    message: string,
  ) {
    super(message);
  }
}

type ErrorMapper = (code: PlatformErrorCode, message: string) => PlatformFailure;

let mapper: ErrorMapper = (code, message) => new PlatformError(code, message);
const raised = new WeakSet<object>();

/** The embedding application's error type for platform failures (installed once by src/errors.ts). */
export function installPlatformErrorMapper(map: ErrorMapper): void {
  mapper = map;
}

/** Every platform failure is created here, so the installed mapper sees all of them. */
export function platformError(code: PlatformErrorCode, message: string): PlatformFailure {
  const err = mapper(code, message);
  raised.add(err);
  return err;
}

/** Whether `err` was raised by the platform layer (as a PlatformError or through the mapper). */
export function isPlatformFailure(err: unknown): err is PlatformFailure {
  return err instanceof PlatformError || (typeof err === "object" && err !== null && raised.has(err));
}
