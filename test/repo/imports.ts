// The repository's import graph, read from the sources: what the layering and door tests check.
import fs from "node:fs";
import path from "node:path";

export const REPO = path.resolve(import.meta.dir, "../..");

/** Every .ts file under `rel` (repository-relative, '/'-separated). */
export function sourcesUnder(rel: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(REPO, rel), { withFileTypes: true })) {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourcesUnder(child));
    else if (entry.name.endsWith(".ts")) out.push(child);
  }
  return out;
}

/** Every specifier `source` imports or re-exports, type-only and dynamic ones included. */
export function specifiers(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/\bfrom\s+(["'])([^"'\n]+)\1|\bimport\s*\(\s*(["'])([^"'\n]+)\3\s*\)|^\s*import\s+(["'])([^"'\n]+)\5/gm)) {
    out.push(m[2] ?? m[4] ?? m[6]!);
  }
  return out;
}

/** file -> the repository files its relative specifiers name. */
export function importGraph(files: Record<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, source] of Object.entries(files)) {
    const targets = specifiers(source)
      .filter((s) => s.startsWith("."))
      .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)));
    graph.set(file, targets);
  }
  return graph;
}

/** The sources of every file under `dirs`, keyed by repository-relative path. */
export function readSources(...dirs: string[]): Record<string, string> {
  return Object.fromEntries(dirs.flatMap(sourcesUnder).map((f) => [f, fs.readFileSync(path.join(REPO, f), "utf8")]));
}
