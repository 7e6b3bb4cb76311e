// src/fs/search/ has one door (docs/architecture.md): outside the wing, src/ imports only its
// index.ts, so the engine's internals can change without touching the rest of the file layer.
// Tests may import internals. The fixture case proves the check reports an import past the door.
import { expect, test } from "bun:test";
import path from "node:path";
import { readSources, specifiers } from "./imports.ts";

const WING = "src/fs/search";

/** "file -> specifier" for each import from outside the wing that reaches a wing module other than its index.ts. */
export function pastTheDoor(files: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [file, source] of Object.entries(files)) {
    if (file.startsWith(`${WING}/`)) continue;
    for (const spec of specifiers(source)) {
      if (!spec.startsWith(".")) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      if (target.startsWith(`${WING}/`) && target !== `${WING}/index.ts`) found.push(`${file} -> ${spec}`);
    }
  }
  return found;
}

test("an import past the door is reported, one through it is not", () => {
  expect(
    pastTheDoor({
      "src/fs/service.ts": 'import { searchText } from "./search/index.ts";\nimport type { ScanSpec } from "./search/search-batch.ts";\n',
      "src/mcp/x.ts": 'export { startSearchWorker } from "../fs/search/search-pool.ts";\n',
      "src/fs/search/search.ts": 'import { Scanner } from "./scan.ts";\n',
    }),
  ).toEqual(["src/fs/service.ts -> ./search/search-batch.ts", "src/mcp/x.ts -> ../fs/search/search-pool.ts"]);
});

test("outside src/fs/search/, src/ imports only src/fs/search/index.ts from it", () => {
  const files = readSources("src");
  const reachers = Object.entries(files).filter(([f, s]) => !f.startsWith(`${WING}/`) && s.includes("search/index.ts"));
  expect(reachers.map(([f]) => f).sort()).toEqual(["src/fs/index.ts", "src/fs/service.ts"]);
  expect(pastTheDoor(files)).toEqual([]);
});
