// Ignore files in find_files, search_text, directory_tree and list_directory: `.ignore` over
// `.gitignore`, include_ignored, the workdir switch, `exclude` pruning, the ignored counts, the
// rule that ignore files only ever hide more (a `!` pattern never shows a hidden, denied or
// reserved path), bounded ignore files (a 10 MB one, one with too many patterns) and list marks.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { MAX_IGNORE_FILE_BYTES, MAX_IGNORE_PATTERNS } from "../../src/fs/ignore/index.ts";
import { parseIgnoreText } from "../../src/fs/ignore/parse.ts";
import { IgnoreRules, IGNORE, INCLUDE, UNDECIDED } from "../../src/fs/ignore/rules.ts";
import { globWork } from "../../src/fs/glob.ts";
import { expectCode, single, write } from "./helpers.ts";

async function findAll(svc: ReturnType<typeof single>["svc"], extra: Record<string, unknown> = {}) {
  const r = await svc.findFiles({ workdir: "w", pattern: "*", limit: 100, ...extra });
  return { paths: r.matches.map((m) => m.path).sort(), ignored: r.ignored, warnings: r.ignore_warnings };
}

describe("ignore files in the walks", () => {
  test("nested .gitignore files, each relative to its own directory; ignored entries are counted", async () => {
    const { svc, root } = single();
    write(root, ".gitignore", "node_modules/\n*.log\n/top.txt\n");
    write(root, "top.txt", "x");
    write(root, "keep.txt", "x");
    write(root, "a.log", "x");
    write(root, "node_modules/pkg/index.js", "x");
    write(root, "sub/.gitignore", "gen\n!keep.log\n/only-here.txt\n");
    write(root, "sub/top.txt", "x");
    write(root, "sub/keep.log", "x");
    write(root, "sub/x.log", "x");
    write(root, "sub/only-here.txt", "x");
    write(root, "sub/deep/only-here.txt", "x");
    write(root, "sub/gen/a.txt", "x");
    const r = await findAll(svc);
    expect(r.paths).toEqual(["keep.txt", "sub/deep/only-here.txt", "sub/keep.log", "sub/top.txt"]);
    // top.txt, a.log, node_modules (one entry: never opened), sub/x.log, sub/only-here.txt, sub/gen
    expect(r.ignored).toBe(6);
    expect(r.warnings).toBeUndefined();
    svc.close();
  });

  test("a negation cannot re-include a file whose parent directory is excluded", async () => {
    const { svc, root } = single();
    write(root, ".gitignore", "build/\n!build/keep.txt\nlogs/*\n!logs/keep.txt\n");
    write(root, "build/keep.txt", "x");
    write(root, "logs/keep.txt", "x");
    write(root, "logs/drop.txt", "x");
    expect((await findAll(svc)).paths).toEqual(["logs/keep.txt"]);
    svc.close();
  });

  test(".ignore outranks .gitignore in the same directory; a deeper directory outranks both", async () => {
    const { svc, root } = single();
    write(root, ".gitignore", "*.txt\n");
    write(root, ".ignore", "!keep.txt\n");
    write(root, "keep.txt", "x");
    write(root, "drop.txt", "x");
    write(root, "d/.ignore", "*.md\n");
    write(root, "d/.gitignore", "!*.md\n!drop.txt\n");
    write(root, "d/a.md", "x");
    write(root, "d/drop.txt", "x");
    expect((await findAll(svc)).paths).toEqual(["d/drop.txt", "keep.txt"]);
    svc.close();
  });

  test(".git/info/exclude counts when the workdir root holds .git/, below every .gitignore", async () => {
    const { svc, root } = single();
    write(root, ".git/info/exclude", "*.tmp\nsecret-notes/\n");
    write(root, ".gitignore", "!keep.tmp\n");
    write(root, "a.tmp", "x");
    write(root, "keep.tmp", "x");
    write(root, "secret-notes/n.txt", "x");
    write(root, "b.txt", "x");
    expect((await findAll(svc)).paths).toEqual(["b.txt", "keep.tmp"]);
    svc.close();
  });

  test("include_ignored brings ignored paths back; respect_ignore_files = false turns the files off", async () => {
    const { svc, root } = single();
    write(root, ".gitignore", "dist/\n*.map\n");
    write(root, "dist/app.js", "needle");
    write(root, "app.js.map", "needle");
    write(root, "src/app.js", "needle");
    expect((await findAll(svc)).paths).toEqual(["src/app.js"]);
    expect(await findAll(svc, { include_ignored: true })).toEqual({ paths: ["app.js.map", "dist/app.js", "src/app.js"], ignored: 0, warnings: undefined });
    const s = await svc.searchText({ workdir: "w", query: "needle" });
    expect([s.matches.map((m) => m.path), s.ignored]).toEqual([["src/app.js"], 2]);
    const all = await svc.searchText({ workdir: "w", query: "needle", include_ignored: true });
    expect([all.matches.map((m) => m.path).sort(), all.ignored]).toEqual([["app.js.map", "dist/app.js", "src/app.js"], 0]);
    const t = await svc.directoryTree({ workdir: "w" });
    expect([t.tree.children!.map((c) => c.name), t.ignored]).toEqual([["src"], 2]);
    expect((await svc.directoryTree({ workdir: "w", include_ignored: true })).tree.children!.map((c) => c.name)).toEqual(["app.js.map", "dist", "src"]);
    svc.close();
    const off = single({ respect_ignore_files: false });
    write(off.root, ".gitignore", "dist/\n");
    write(off.root, "dist/app.js", "x");
    expect(await findAll(off.svc)).toEqual({ paths: ["dist/app.js"], ignored: 0, warnings: undefined });
    const l = await off.svc.listDirectory({ workdir: "w" });
    expect(l.entries.map((e) => [e.name, e.ignored])).toEqual([["dist", undefined]]);
    off.svc.close();
  });

  test("an ignored directory is never opened: its entries cost no walk budget", async () => {
    const { svc, root } = single({}, { max_walk_entries: 20 });
    write(root, ".gitignore", "node_modules\n");
    for (let i = 0; i < 200; i++) write(root, `node_modules/p${i}.js`, "x");
    write(root, "a.js", "x");
    const r = await svc.findFiles({ workdir: "w", pattern: "*.js" });
    expect(r).toEqual({ matches: [{ path: "a.js" }], returned: 1, truncated: false, ignored: 1 });
    // with include_ignored the same walk reaches the cap
    expect((await svc.findFiles({ workdir: "w", pattern: "*.js", include_ignored: true })).truncated).toBe(true);
    svc.close();
  });

  test("a directory read cut at the walk cap still has its ignore file applied (it sorts after the kept names)", async () => {
    const { svc, root } = single({}, { max_walk_entries: 3 });
    write(root, ".gitignore", "+1.txt\n");
    for (const n of ["+1.txt", "+2.txt", "+3.txt", "+4.txt"]) write(root, n, "x");
    // `+` sorts before `.`: the four smallest names kept by the bounded read hold no .gitignore
    const r = await svc.findFiles({ workdir: "w", pattern: "*" });
    expect(r).toEqual({ matches: [{ path: "+2.txt" }, { path: "+3.txt" }], returned: 2, truncated: true, ignored: 1 });
    const s = await svc.searchText({ workdir: "w", query: "x" });
    expect([s.matches.map((m) => m.path), s.truncated, s.ignored]).toEqual([["+2.txt", "+3.txt"], true, 1]);
    svc.close();
  });

  test("a walk below the root applies the ancestors' rules; a path named explicitly is walked", async () => {
    const { svc, root } = single();
    write(root, ".gitignore", "vendor/\nsrc/gen/*.ts\n*.bak\n");
    write(root, "src/gen/a.ts", "x");
    write(root, "src/gen/a.js", "x");
    write(root, "src/gen/a.bak", "x");
    write(root, "vendor/lib/x.ts", "x");
    expect((await findAll(svc, { path: "src" })).paths).toEqual(["src/gen/a.js"]);
    expect((await findAll(svc, { path: "vendor" })).paths).toEqual(["vendor/lib/x.ts"]);
    // list_directory marks what git would call ignored, whole directories included
    const top = await svc.listDirectory({ workdir: "w" });
    expect(top.entries.map((e) => [e.name, e.ignored ?? false])).toEqual([
      ["src", false],
      ["vendor", true],
    ]);
    const gen = await svc.listDirectory({ workdir: "w", path: "src/gen" });
    expect(gen.entries.map((e) => [e.name, e.ignored ?? false])).toEqual([
      ["a.bak", true],
      ["a.js", false],
      ["a.ts", true],
    ]);
    const inside = await svc.listDirectory({ workdir: "w", path: "vendor/lib" });
    expect(inside.entries.map((e) => [e.name, e.ignored ?? false])).toEqual([["x.ts", true]]);
    svc.close();
  });

  test("ignore rules only ever hide more: `!` never shows a hidden, denied or reserved path", async () => {
    const { svc, root } = single({ extra_deny_globs: ["private"] });
    write(root, ".gitignore", "*\n!.env\n!.hidden\n!.hidden/**\n!*.pem\n!private\n!private/**\n!.serverfs-tmp-x\n!*/\n!ok.txt\n");
    write(root, ".env", "needle");
    write(root, ".hidden/a.txt", "needle");
    write(root, "cert.pem", "needle");
    write(root, "private/p.txt", "needle");
    write(root, ".serverfs-tmp-x", "needle");
    write(root, "ok.txt", "needle");
    write(root, "other.txt", "needle");
    expect((await findAll(svc)).paths).toEqual(["ok.txt"]);
    expect((await svc.searchText({ workdir: "w", query: "needle" })).matches.map((m) => m.path)).toEqual(["ok.txt"]);
    expect((await svc.directoryTree({ workdir: "w" })).tree.children!.map((c) => c.name)).toEqual(["ok.txt"]);
    expect((await svc.listDirectory({ workdir: "w" })).entries.map((e) => e.name)).toEqual(["ok.txt", "other.txt"]);
    // and include_ignored shows no more than the policy allows
    expect((await findAll(svc, { include_ignored: true })).paths).toEqual(["ok.txt", "other.txt"]);
    svc.close();
  });

  test("an ignore file the policy denies is not read", async () => {
    const { svc, root } = single({ extra_deny_globs: [".gitignore"] });
    write(root, ".gitignore", "*.txt\n");
    write(root, "a.txt", "x");
    expect((await findAll(svc)).paths).toEqual(["a.txt"]);
    svc.close();
  });

  test("a 10 MB ignore file is read to 1 MiB, used as far as it is whole, and the answer says so", async () => {
    const { svc, root } = single();
    // the first line matters, then 10 MB of patterns that match nothing, then one past the cut
    const filler = "no-such-name-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n";
    const text = `*.log\n${filler.repeat(Math.ceil((10 * 1024 * 1024) / filler.length))}*.txt\n`;
    expect(text.length).toBeGreaterThan(10 * 1024 * 1024);
    write(root, ".gitignore", text);
    write(root, "a.log", "x");
    write(root, "b.txt", "x");
    const r = await findAll(svc);
    expect(r.paths).toEqual(["b.txt"]);
    expect(r.warnings).toEqual([
      `.gitignore: larger than ${MAX_IGNORE_FILE_BYTES} bytes; only its whole lines within the first ${MAX_IGNORE_FILE_BYTES} bytes were used`,
      `.gitignore: more than ${MAX_IGNORE_PATTERNS} patterns; the first ${MAX_IGNORE_PATTERNS} were used, ${Math.floor(MAX_IGNORE_FILE_BYTES / filler.length) + 1 - MAX_IGNORE_PATTERNS} dropped`,
    ]);
    const t = await svc.directoryTree({ workdir: "w" });
    expect(t.ignore_warnings?.length).toBe(2);
    expect((await svc.searchText({ workdir: "w", query: "x" })).ignore_warnings?.length).toBe(2);
    svc.close();
  });

  test("an unreadable or odd ignore file never fails the walk", async () => {
    const { svc, root } = single();
    fs.mkdirSync(path.join(root, ".gitignore"));
    write(root, "sub/real", "*.txt\n");
    fs.symlinkSync("real", path.join(root, "sub/.gitignore"));
    write(root, "sub/a.txt", "x");
    write(root, "bad/.gitignore", "[unterminated\n\\\n[[:nope:]]\n**/\n");
    write(root, "bad/[unterminated", "x");
    write(root, "a.txt", "x");
    const r = await findAll(svc);
    expect(r.paths).toEqual(["a.txt", "bad/[unterminated", "sub/a.txt", "sub/real"]);
    expect(r.warnings).toEqual([".gitignore: not a regular file; not used", "sub/.gitignore: could not be read (ELOOP); not used"]);
    svc.close();
  });
});

describe("exclude", () => {
  test("globs relative to path prune files and whole directories, and are bounded", async () => {
    const { svc, root } = single();
    write(root, "p/src/a.ts", "needle");
    write(root, "p/src/gen/b.ts", "needle");
    write(root, "p/dist/c.js", "needle");
    write(root, "p/x.min.js", "needle");
    write(root, "p/y.js", "needle");
    const ex = { path: "p", exclude: ["dist", "*.min.js", "src/gen"] };
    expect((await findAll(svc, ex)).paths).toEqual(["p/src/a.ts", "p/y.js"]);
    expect((await svc.searchText({ workdir: "w", query: "needle", ...ex })).matches.map((m) => m.path).sort()).toEqual(["p/src/a.ts", "p/y.js"]);
    const t = await svc.directoryTree({ workdir: "w", ...ex });
    expect(t.tree.children!.map((c) => c.name)).toEqual(["src", "y.js"]);
    expect(t.tree.children![0]!.children!.map((c) => c.name)).toEqual(["a.ts"]);
    // excluded entries are not "ignored"
    expect(t.ignored).toBe(0);
    await expectCode(svc.findFiles({ workdir: "w", pattern: "*", exclude: Array(65).fill("x") }), "INVALID_ARGUMENT");
    await expectCode(svc.findFiles({ workdir: "w", pattern: "*", exclude: ["x".repeat(1025)] }), "INVALID_ARGUMENT");
    await expectCode(svc.searchText({ workdir: "w", query: "n", exclude: [""] }), "INVALID_ARGUMENT");
    svc.close();
  });

  test("a pathological exclude glob costs linear work", async () => {
    const { svc, root } = single();
    const name = `${"a".repeat(200)}b`;
    write(root, name, "x");
    const before = globWork.steps;
    const r = await findAll(svc, { exclude: [`${"*a".repeat(40)}c`] });
    expect(r.paths).toEqual([name]);
    // states (<= 81) x (code points + 1): the NFA never backtracks
    expect(globWork.steps - before).toBeLessThan(82 * 202 + 1000);
    svc.close();
  });
});

describe("one level's compiled rules", () => {
  const rules = (text: string) => new IgnoreRules(parseIgnoreText(text).patterns);

  test("last match wins; literals and wildcards interleave by position", () => {
    const r = rules("*.log\n!keep.log\nkeep*\n");
    expect(r.decide("keep.log", "keep.log", false)).toBe(IGNORE);
    const s = rules("keep*\n*.log\n!keep.log\n");
    expect(s.decide("keep.log", "keep.log", false)).toBe(INCLUDE);
    expect(s.decide("other", "other", false)).toBe(UNDECIDED);
  });

  test("escapes, trailing spaces, comments and directory-only patterns", () => {
    const r = rules("\\#lit\n\\!bang\nsp\\ \ntrail   \n# comment\ndir/\n");
    expect(r.decide("#lit", "#lit", false)).toBe(IGNORE);
    expect(r.decide("!bang", "!bang", false)).toBe(IGNORE);
    expect(r.decide("sp ", "sp ", false)).toBe(IGNORE);
    expect(r.decide("trail", "trail", false)).toBe(IGNORE);
    expect(r.decide("# comment", "# comment", false)).toBe(UNDECIDED);
    expect(r.decide("dir", "dir", false)).toBe(UNDECIDED);
    expect(r.decide("dir", "dir", true)).toBe(IGNORE);
  });

  test("anchoring and `**`", () => {
    const r = rules("/root-only\nmid/dle\na/**/z\n**/any\nend/**\n");
    expect(r.decide("root-only", "x/root-only", false)).toBe(UNDECIDED);
    expect(r.decide("root-only", "root-only", false)).toBe(IGNORE);
    expect(r.decide("dle", "mid/dle", false)).toBe(IGNORE);
    expect(r.decide("dle", "x/mid/dle", false)).toBe(UNDECIDED);
    expect(r.decide("z", "a/z", false)).toBe(IGNORE);
    expect(r.decide("z", "a/b/c/z", false)).toBe(IGNORE);
    expect(r.decide("any", "p/q/any", false)).toBe(IGNORE);
    expect(r.decide("f", "end/x/f", false)).toBe(IGNORE);
    expect(r.decide("end", "end", true)).toBe(UNDECIDED);
  });

  test("the pattern count is bounded per file", () => {
    const p = parseIgnoreText("x\n".repeat(MAX_IGNORE_PATTERNS + 5));
    expect([p.patterns.length, p.dropped]).toEqual([MAX_IGNORE_PATTERNS, 5]);
  });
});
