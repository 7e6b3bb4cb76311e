// Where a Worker's script is. In a compiled executable every entry point is embedded under one
// virtual root (build/compile.ts names the entries and sets that root to the repository), and a
// Worker may only load what is embedded there; from a checkout it is the file itself.
// `fromRepoRoot` is the script's path from the repository root, e.g. "src/fs/search/search-worker.ts".
// (On Windows import.meta.url spells the root file:///B:/%7EBUN/root/, measured with Bun 1.4.4.)
const EMBEDDED_ROOT = /^file:\/\/\/(?:\$bunfs|[A-Za-z]:\/(?:~|%7E)BUN)\/root\//i;

export function workerScriptUrl(fromRepoRoot: string): URL {
  const embedded = EMBEDDED_ROOT.exec(import.meta.url);
  if (embedded !== null) return new URL(fromRepoRoot.replace(/\.ts$/, ".js"), embedded[0]);
  return new URL(`../${fromRepoRoot}`, import.meta.url);
}
