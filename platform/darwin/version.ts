// The oldest macOS serverfs serves on. O_NOFOLLOW_ANY (the flag the macOS file backend relies on
// to refuse a symlink in any component of a lookup) arrived in Darwin 20, macOS 11. An older
// kernel does not reject the unknown flag. It ignores it, so the containment would silently be
// gone. The check is a pure function of os.release() (the Darwin version, e.g. "24.1.0"), so the
// gate is tested on Linux.
import { platformError } from "../errors.ts";
import { osKindOf } from "../os.ts";

/** Darwin 20 is macOS 11 (Big Sur): the first kernel with O_NOFOLLOW_ANY. */
export const MIN_DARWIN_MAJOR = 20;

/** Why serverfs must not serve on this Darwin release, or null when it may. */
export function darwinReleaseProblem(release: string): string | null {
  const m = /^(\d+)\./.exec(release.trim());
  if (!m) return `unrecognised Darwin release '${release.slice(0, 32)}' (need Darwin ${MIN_DARWIN_MAJOR}+, macOS 11 or later)`;
  const major = Number(m[1]);
  if (major < MIN_DARWIN_MAJOR) {
    return `Darwin ${major} (before macOS 11) lacks O_NOFOLLOW_ANY; serverfs needs Darwin ${MIN_DARWIN_MAJOR}+ (macOS 11 or later)`;
  }
  return null;
}

/** Throw PLATFORM_UNSUPPORTED on a Darwin release too old to contain file access. */
export function assertDarwinRelease(release: string): void {
  const problem = darwinReleaseProblem(release);
  if (problem !== null) throw platformError("PLATFORM_UNSUPPORTED", problem);
}

/** The same gate for any host: only Darwin has a minimum release. */
export function osReleaseProblem(platform: NodeJS.Platform, release: string): string | null {
  return osKindOf(platform) === "darwin" ? darwinReleaseProblem(release) : null;
}
