// docs/architecture.md maps every folder to its job: each directory under src/ and platform/, and
// each folder directly under test/, bench/ and docs/, must be named there by its full path (as
// `path/`), and docs/README.md must link every document under docs/. The fixture case proves the
// check reports a folder the map leaves out.
import { expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";

const REPO = path.resolve(import.meta.dir, "../..");

function dirsUnder(rel: string, depth: number): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(REPO, rel), { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === "node_modules") continue;
    const child = `${rel}/${entry.name}`;
    out.push(child);
    if (depth > 1) out.push(...dirsUnder(child, depth - 1));
  }
  return out;
}

export function unmapped(doc: string, dirs: readonly string[]): string[] {
  return dirs.filter((d) => !doc.includes(`\`${d}/\``));
}

function filesUnder(rel: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(REPO, rel), { withFileTypes: true })) {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(child));
    else if (entry.name.endsWith(".md")) out.push(child);
  }
  return out;
}

test("the map reports a folder it leaves out", () => {
  expect(unmapped("| `src/fs/` | files |", ["src/fs", "src/fsx", "src/mcp"])).toEqual(["src/fsx", "src/mcp"]);
});

test("docs/architecture.md names every folder of src/ and platform/, and those directly under test/, bench/, docs/", () => {
  const doc = fs.readFileSync(path.join(REPO, "docs/architecture.md"), "utf8");
  const dirs = ["src", "platform", ...dirsUnder("src", 9), ...dirsUnder("platform", 9), ...dirsUnder("test", 1), ...dirsUnder("bench", 1), ...dirsUnder("docs", 1)];
  expect(dirs.length).toBeGreaterThan(40);
  expect(unmapped(doc, dirs)).toEqual([]);
});

test("docs/README.md links every document under docs/", () => {
  const index = fs.readFileSync(path.join(REPO, "docs/README.md"), "utf8");
  const docs = filesUnder("docs")
    .map((f) => f.slice("docs/".length))
    .filter((f) => f !== "README.md");
  expect(docs.length).toBeGreaterThan(10);
  expect(docs.filter((f) => !index.includes(`](${f})`))).toEqual([]);
});
