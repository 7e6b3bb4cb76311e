// Host-path containment, the one test every module uses: `child` is `parent` itself or lies below
// it. Both are resolved lexically (`..` segments collapse) without touching the filesystem, so
// callers compare real paths when symlinks matter. A sibling that merely shares the prefix
// (`/repo2` against `/repo`) is outside, and a name that starts with two dots (`/repo/..cache`) is
// inside. On Windows, `path.win32.relative` compares drive letters and names case-insensitively.
import path from "node:path";

type PlatformPath = typeof path.posix;

export function isWithin(child: string, parent: string, paths: PlatformPath = path): boolean {
  const rel = paths.relative(parent, child);
  if (rel === "") return true;
  if (paths.isAbsolute(rel)) return false; // another drive on Windows
  return rel !== ".." && !rel.startsWith(`..${paths.sep}`);
}
