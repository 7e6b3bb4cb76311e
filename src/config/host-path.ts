// The grammar of a configured host path. It is purely lexical and the same on every OS, so a
// config means the same thing wherever it is validated: existence and type of a workdir root
// are checked by serve/doctor, not here.
//
// Accepted: POSIX absolute (`/…`), drive-absolute (`X:\…`, `X:/…`), UNC (`\\server\share…`) and
// the Win32 namespaces (`\\?\…`, `\\.\…`). Refused: relative (`x`, `./x`), drive-relative
// (`D:x`), current-drive-rooted (`\x`), any `..` component split on either separator, NUL.

const DRIVE_ABSOLUTE = /^[A-Za-z]:[\\/]/;
const UNC = /^\\\\[^\\/]+[\\/][^\\/]+/;
const WIN32_NAMESPACE = /^\\\\[?.]\\./;

export const MAX_HOST_PATH_LENGTH = 4096;

/** Why `text` is not an acceptable absolute host path, or null when it is. */
export function hostPathProblem(text: string): string | null {
  if (text.length === 0) return "must not be empty";
  if (text.length > MAX_HOST_PATH_LENGTH) return `must be at most ${MAX_HOST_PATH_LENGTH} characters`;
  if (text.includes("\0")) return "must not contain NUL";
  if (/[\r\n]/.test(text)) return "must not contain a line break";
  if (text.split(/[\\/]/).includes("..")) return "must not contain a '..' component";
  if (!isAbsoluteHostPath(text)) {
    return "must be an absolute path (/…, X:\\…, \\\\server\\share or \\\\?\\…)";
  }
  return null;
}

export function isAbsoluteHostPath(text: string): boolean {
  if (text.startsWith("/")) return true;
  if (DRIVE_ABSOLUTE.test(text)) return true;
  if (WIN32_NAMESPACE.test(text)) return true;
  return UNC.test(text);
}
