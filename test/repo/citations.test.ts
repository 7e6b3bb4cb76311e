// The repository explains itself (docs/maintainers/testing.md, "Other suites"): no comment, test
// or doc cites the reference documents of the earlier implementation — by file name, by a
// section-sign number, or as that spec's readme. A contract that matters is written in docs/
// and cited there. A public standard cited by section (an RFC number, then its section) is not
// such a document. The scanner reads the real files; the fixture cases prove it reports each
// kind of citation, so the real scan cannot pass by finding nothing. The patterns are assembled from pieces so that this
// file, which is scanned too, does not cite anything itself.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const REPO = path.resolve(import.meta.dir, "../..");
const SCANNED = ["src", "platform", "test", "docs", "bench", "build", "interop", ".ci", "README.md"];
const SKIP_DIRS = new Set(["node_modules", "dist", ".git"]);

const SECTION = "\u00a7";
const OUTSIDE_NAMES = [
  ["agent", "reference"],
  ["filesystem", "reference"],
  ["acp", "client", "findings"],
  ["native", "findings"],
  ["bun", "platform", "findings"],
  ["peers", "and", "user", "needs"],
].map((parts) => parts.join("-"));
const NAMED = new RegExp(`\\b(${OUTSIDE_NAMES.join("|")})\\b`, "i");
const SPEC_README = new RegExp(`\\bspec ${"READ"}ME\\b`, "i");
/** A section sign that does not follow "RFC <number> ". */
const BARE_SECTION = new RegExp(`(?<!\\bRFC \\d+ )${SECTION}`);


export interface Citation {
  file: string;
  line: number;
  text: string;
}

export function citationsInText(text: string): number[] {
  const out: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (NAMED.test(line) || SPEC_README.test(line) || BARE_SECTION.test(line)) out.push(i + 1);
  });
  return out;
}

function filesUnder(full: string): string[] {
  const st = fs.statSync(full, { throwIfNoEntry: false });
  if (st === undefined) return [];
  if (st.isFile()) return [full];
  const out: string[] = [];
  for (const entry of fs.readdirSync(full, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const child = path.join(full, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(child));
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

/** Every citation of an outside document in the text files under `roots` (relative to `base`). */
export function scanCitations(base: string, roots: readonly string[]): Citation[] {
  const out: Citation[] = [];
  for (const root of roots) {
    for (const full of filesUnder(path.join(base, root))) {
      const bytes = fs.readFileSync(full);
      if (bytes.includes(0)) continue; // not text
      const text = bytes.toString("utf8");
      const lines = text.split("\n");
      for (const n of citationsInText(text)) {
        out.push({ file: path.relative(base, full).split(path.sep).join("/"), line: n, text: (lines[n - 1] as string).trim() });
      }
    }
  }
  return out;
}


const tmpRoots: string[] = [];
afterAll(() => {
  for (const d of tmpRoots) fs.rmSync(d, { recursive: true, force: true });
});

describe("citation scanner (fixtures)", () => {
  test("reports a file name, a bare section number and the spec's readme; lets an RFC section through", () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-cite-"));
    tmpRoots.push(base);
    fs.mkdirSync(path.join(base, "src", "deep"), { recursive: true });
    fs.writeFileSync(
      path.join(base, "src", "deep", "a.ts"),
      [
        "// plain comment, docs/security.md",
        `// see ${OUTSIDE_NAMES[3]} for the recipe`,
        `// the rule (README ${SECTION}3.4)`,
        `// flags (spec ${"READ"}ME) matter`,
        `// canonical base64 (RFC 4648 ${SECTION}3.5)`,
        `// ${OUTSIDE_NAMES[0]!.toUpperCase()}.md`,
      ].join("\n"),
    );
    fs.writeFileSync(path.join(base, "README.md"), `intro\nseed ${SECTION}14.1\n`);
    fs.writeFileSync(path.join(base, "src", "blob.bin"), Buffer.from([0, 1, 2, ...Buffer.from(OUTSIDE_NAMES[2] as string)]));
    const found = scanCitations(base, ["src", "README.md", "missing-dir"]);
    expect(found.map((c) => `${c.file}:${c.line}`).sort()).toEqual(["README.md:2", "src/deep/a.ts:2", "src/deep/a.ts:3", "src/deep/a.ts:4", "src/deep/a.ts:6"]);
  });
});

test("no file in src, platform, test, docs, bench, build, .ci or README.md cites an outside document", () => {
  const found = scanCitations(REPO, SCANNED);
  expect(found).toEqual([]);
  // The scan really read the tree: this file is in it and its patterns are live.
  expect(citationsInText(`x ${SECTION}1`)).toEqual([1]);
});
