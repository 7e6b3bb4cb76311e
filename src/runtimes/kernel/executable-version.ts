// Identifying an operator-installed provider executable (found by executable.ts). Asking it for its
// `--version` is the only thing a probe ever runs, bounded in time and started through the
// platform containment like every provider child, and the answer is cached per (path, size,
// mtime) so listing runtimes stays cheap.
import * as fs from "node:fs";
import * as path from "node:path";
import { containment } from "../../../platform/index.ts";

const versionCache = new Map<string, string>();
const VERSION_TIMEOUT_MS = 10_000;
const MAX_VERSION_CHARS = 128;

/**
 * The first line of `<exe> --version`, with `prefix` (e.g. "codex-cli ") removed, or null when the
 * executable does not answer in time. Runs in its own containment set, stopped with proof.
 */
export async function executableVersion(exe: string, env: Record<string, string>, parse: (firstLine: string) => string | null): Promise<string | null> {
  let key: string;
  try {
    const st = fs.statSync(exe);
    key = `${exe}\0${st.size}\0${st.mtimeMs}`;
  } catch {
    return null;
  }
  if (versionCache.has(key)) return versionCache.get(key)!;
  let version: string | null = null;
  const proc = await containment().spawn({
    argv: [exe, "--version"],
    cwd: path.dirname(exe),
    env,
    runId: `probe-${crypto.randomUUID()}`,
    stderrLimitBytes: 4096,
  });
  try {
    proc.stdin.end();
    const out = await Promise.race([
      new Response(proc.stdout).text(),
      new Promise<null>((r) => setTimeout(() => r(null), VERSION_TIMEOUT_MS)),
    ]);
    if (out !== null) {
      const first = out.split(/\r?\n/).find((l) => l.trim().length > 0)?.trim() ?? "";
      const parsed = parse(first);
      version = parsed !== null && parsed.length > 0 ? parsed.slice(0, MAX_VERSION_CHARS) : null;
    }
  } catch {
    version = null;
  } finally {
    await proc.stop(1000);
  }
  if (version !== null) versionCache.set(key, version);
  return version;
}
