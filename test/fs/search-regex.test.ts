// search_text with regex: true on real files: per-line anchors, case folding, Unicode classes,
// undecodable lines, the NUL cut, the text cap, the 64 KiB regex line bound, limit/truncated,
// globs, multi-buffer files, refused patterns, and parity with real ripgrep when installed.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectCode, registry, single, tempDir, workdir, write } from "./helpers.ts";
import { createFileService } from "../../src/fs/index.ts";
import { compileLineRegex, dfaBudgetLeft, DFA_SEARCH_BYTES, DFA_THREAD_BYTES, limitDfa, MAX_REGEX_CALL_WORK, MAX_REGEX_LINE_BYTES, regexLineCap, type RegexLines } from "../../src/fs/search/scan-regex.ts";
import { setSearchWorkerEnabled } from "../../src/fs/search/search-pool.ts";

type Svc = ReturnType<typeof single>["svc"];
const rx = (svc: Svc, query: string, more: Record<string, unknown> = {}) => svc.searchText({ workdir: "w", query, regex: true, limit: 100, ...more });
const at = (r: { matches: { path: string; line: number }[] }) => r.matches.map((m) => `${m.path}:${m.line}`).sort();

describe("regex semantics per line", () => {
  test("^ and $ anchor at every line's start and end; \\A and \\z and (?-m) mean the same; a CRLF line keeps its \\r", async () => {
    const f = single();
    write(f.root, "a.txt", "foo\nxfoo\nfoo bar\nbarfoo\nfoo\n");
    write(f.root, "crlf.txt", "foo\r\nbar\r\n");
    expect(at(await rx(f.svc, "^foo"))).toEqual(["a.txt:1", "a.txt:3", "a.txt:5", "crlf.txt:1"]);
    expect(at(await rx(f.svc, "foo$"))).toEqual(["a.txt:1", "a.txt:2", "a.txt:4", "a.txt:5"]);
    expect(at(await rx(f.svc, "^foo$"))).toEqual(["a.txt:1", "a.txt:5"]);
    expect(at(await rx(f.svc, "\\Afoo\\z"))).toEqual(["a.txt:1", "a.txt:5"]);
    expect(at(await rx(f.svc, "(?-m)^foo$"))).toEqual(["a.txt:1", "a.txt:5"]);
    expect(at(await rx(f.svc, "^foo\\r$"))).toEqual(["crlf.txt:1"]);
    expect((await rx(f.svc, "^bar\\r?$")).matches).toEqual([{ path: "crlf.txt", line: 2, text: "bar\r" }]);
    // a match never spans lines: \s and [^x] never reach across the \n
    expect(at(await rx(f.svc, "foo\\s+bar"))).toEqual(["a.txt:3"]);
    expect(at(await rx(f.svc, "xfoo[^z]foo"))).toEqual([]);
    expect(at(await rx(f.svc, "\\n"))).toEqual([]);
    // an empty-matching pattern matches every line, and no phantom line after the final \n
    expect((await rx(f.svc, "^", { glob: "a.txt" })).returned).toBe(5);
    expect((await rx(f.svc, "^$", { glob: "a.txt" })).returned).toBe(0);
  });

  test("case_sensitive=false is RE2's (?i) with Unicode simple folding; inline (?i) works too", async () => {
    const f = single();
    write(f.root, "g.txt", "ΣΊΣΥΦΟΣ\nHello World\nKELVIN \u212A\nstraße\n");
    expect(at(await rx(f.svc, "σίσυφοσ", { case_sensitive: false }))).toEqual(["g.txt:1"]);
    expect(at(await rx(f.svc, "σίσυφοσ"))).toEqual([]);
    expect(at(await rx(f.svc, "σίσυφος", { case_sensitive: false }))).toEqual(["g.txt:1"]);
    expect(at(await rx(f.svc, "(?i)hello\\s+WORLD"))).toEqual(["g.txt:2"]);
    expect(at(await rx(f.svc, "^hello", { case_sensitive: false }))).toEqual(["g.txt:2"]);
    // U+212A KELVIN SIGN folds to k
    expect(at(await rx(f.svc, "kelvin k$", { case_sensitive: false }))).toEqual(["g.txt:3"]);
    // simple folding: ß is not SS (documented difference from the literal mode's full folding)
    expect(at(await rx(f.svc, "STRASSE", { case_sensitive: false }))).toEqual([]);
  });

  test("case-insensitive required literals (our ASCII prefilter) never hide a match, across many pieces", async () => {
    const f = single();
    const rows = Array.from({ length: 30_000 }, (_, i) => `row ${i} lorem ipsum dolor`);
    rows[7] = "xx Zq_NoSuch_Token_42 yy";
    rows[29_990] = "the KELVIN scale";
    rows[15_000] = "tail BaRrRX end";
    write(f.root, "ascii.txt", `${rows.join("\n")}\n`);
    write(f.root, "uni.txt", "temperature \u212Aelvin\nſtraße\n");
    const ci = { case_sensitive: false };
    expect(at(await rx(f.svc, "zq_nosuch_token_\\d+", ci))).toEqual(["ascii.txt:8"]);
    expect(at(await rx(f.svc, "(foo|ba)r+x", ci))).toEqual(["ascii.txt:15001"]);
    expect(at(await rx(f.svc, "\\x{212A}elvin", ci))).toEqual(["ascii.txt:29991", "uni.txt:1"]);
    expect(at(await rx(f.svc, "kelvin", ci))).toEqual(["ascii.txt:29991", "uni.txt:1"]);
    expect(at(await rx(f.svc, "^STRASSE|^straSSe|^STRAßE$", ci))).toEqual(["uni.txt:2"]);
    expect(at(await rx(f.svc, "lorem (?-i:IPSUM)", ci))).toEqual([]);
    expect(at(await rx(f.svc, "(?i)zq_nosuch_token_\\d+"))).toEqual(["ascii.txt:8"]);
    expect(at(await rx(f.svc, "(?i)(foo|ba)r+x|kelvin"))).toEqual(["ascii.txt:15001", "ascii.txt:29991", "uni.txt:1"]);
    expect((await rx(f.svc, "ROW 2998\\d LOREM", ci)).returned).toBe(10);
  });

  test("Unicode classes and . see code points of the UTF-8 text", async () => {
    const f = single();
    write(f.root, "u.txt", "前\nab\nΑθήνα 2024\n日本語テキスト\n😀x\n");
    expect(at(await rx(f.svc, "^.$"))).toEqual(["u.txt:1"]);
    expect(at(await rx(f.svc, "^..$"))).toEqual(["u.txt:2", "u.txt:5"]);
    expect(at(await rx(f.svc, "^\\p{Greek}+ \\d{4}$"))).toEqual(["u.txt:3"]);
    expect(at(await rx(f.svc, "\\p{Han}{3}\\p{Katakana}"))).toEqual(["u.txt:4"]);
    expect(at(await rx(f.svc, "^\\x{1F600}x$"))).toEqual(["u.txt:5"]);
    expect((await rx(f.svc, "\\p{Han}+")).matches.map((m) => m.text)).toEqual(["前", "日本語テキスト"]);
    // \w, \d and \b are ASCII-only, as in RE2
    write(f.root, "d.txt", "٣٤\n34\n");
    expect(at(await rx(f.svc, "^\\w+$"))).toEqual(["d.txt:2", "u.txt:2"]);
    expect(at(await rx(f.svc, "^\\d+$"))).toEqual(["d.txt:2"]);
    expect(at(await rx(f.svc, "^\\pN+$"))).toEqual(["d.txt:1", "d.txt:2"]);
  });

  test("a line that is not valid UTF-8 never matches, even a pattern for U+FFFD; other lines of the file still do", async () => {
    const f = single();
    write(f.root, "bad.txt", Buffer.concat([Buffer.from("needle ok\n"), Buffer.from([0x6e, 0x65, 0x65, 0x64, 0x6c, 0x65, 0x20, 0xff, 0x0a]), Buffer.from("needle \uFFFD real\n"), Buffer.from([0xc3, 0x0a])]));
    expect(at(await rx(f.svc, "^needle"))).toEqual(["bad.txt:1", "bad.txt:3"]);
    expect(at(await rx(f.svc, "\\x{FFFD}"))).toEqual(["bad.txt:3"]);
    expect(at(await rx(f.svc, "^.$"))).toEqual([]);
  });

  test("the NUL rule: the 64 KiB block holding the first NUL and everything after it are not searched", async () => {
    const f = single();
    const head = "needle early\n" + "x".repeat(70_000) + "\n";
    write(f.root, "n.bin", Buffer.concat([Buffer.from(head), Buffer.from("needle late\n"), Buffer.alloc(10), Buffer.from("needle after nul\n")]));
    write(f.root, "small.bin", Buffer.from("needle\n\0\n"));
    expect((await rx(f.svc, "^needle \\w+$")).matches.map((m) => m.text)).toEqual(["needle early"]);
    expect((await rx(f.svc, "needle")).matches.map((m) => `${m.path}:${m.text}`)).toEqual(["n.bin:needle early"]);
  });

  test("match text is capped at 2 KiB on a UTF-8 boundary; lines over 64 KiB never match a regex, but do the literal", async () => {
    const f = single();
    const long = `${"é".repeat(1500)}needle${"ü".repeat(1500)}`;
    const big = `${"b".repeat(70 * 1024)}needle`;
    const giant = `${"g".repeat(2 * 1024 * 1024)}needle`;
    write(f.root, "long.txt", `short\n${long}\n${big}\n${giant}\nneedle last\n`);
    const r = await rx(f.svc, "needle");
    expect(r.matches.map((m) => m.line)).toEqual([2, 5]);
    const l = r.matches[0] as { text: string; text_truncated?: boolean };
    expect(l.text_truncated).toBe(true);
    expect(Buffer.byteLength(l.text)).toBeLessThanOrEqual(2048);
    expect(long.startsWith(l.text)).toBe(true);
    expect(r.matches[1]).toEqual({ path: "long.txt", line: 5, text: "needle last" });
    const lit = await f.svc.searchText({ workdir: "w", query: "needle" });
    expect(lit.matches.map((m) => m.line)).toEqual([2, 3, 4, 5]);
    // exactly 64 KiB still matches
    write(f.root, "edge.txt", `${"c".repeat(64 * 1024 - 6)}needle\n`);
    expect(at(await rx(f.svc, "c+needle$", { glob: "edge.txt" }))).toEqual(["edge.txt:1"]);
  });

  test("a large pattern matches shorter lines: the line cap is min(64 KiB, 2 Mi / its instruction count), exactly", async () => {
    const f = single();
    // a[ab]{900}c compiles to ~900 instructions: its cap is a few KiB
    const compiled = compileLineRegex("a[ab]{900}c", true) as RegexLines;
    const cap = compiled.lineCap;
    expect(cap).toBe(regexLineCap(compiled.programSize()));
    expect(cap).toBe(Math.floor(MAX_REGEX_CALL_WORK / compiled.programSize()));
    expect(cap).toBeLessThan(8 * 1024);
    // a match at the end of a line of exactly cap bytes, and of cap + 1 bytes
    const line = (n: number) => `${"b".repeat(n - 902)}a${"ab".repeat(450)}c`;
    write(f.root, "cap.txt", `${line(cap)}
${line(cap + 1)}
${line(1000)}
`);
    expect(at(await rx(f.svc, "a[ab]{900}c"))).toEqual(["cap.txt:1", "cap.txt:3"]);
    // a small pattern keeps the full 64 KiB
    expect(regexLineCap((compileLineRegex("needle", true) as RegexLines).programSize())).toBe(MAX_REGEX_LINE_BYTES);
  });

  test("each search's DFA takes its budget from the thread's and gives it back, whatever the outcome", async () => {
    const f = single();
    write(f.root, "ab.txt", `${"ab".repeat(4000)}\n`.repeat(8));
    const re = compileLineRegex("a[ab]{20}[^ab]", true) as RegexLines;
    // the re2js fields the budget is written to are there (re2js is pinned; an upgrade that moves them fails here)
    expect(limitDfa((re as unknown as { re: Parameters<typeof limitDfa>[0] }).re, DFA_SEARCH_BYTES)).toBe(true);
    expect(dfaBudgetLeft()).toBe(DFA_THREAD_BYTES);
    setSearchWorkerEnabled(false);
    try {
      // more searches at once than the thread's budget has room for: the last ones run without a DFA
      const many = Array.from({ length: DFA_THREAD_BYTES / DFA_SEARCH_BYTES + 2 }, () => rx(f.svc, "a[ab]{20}[^ab]"));
      for (const r of await Promise.all(many)) expect(r.matches).toEqual([]);
      expect(dfaBudgetLeft()).toBe(DFA_THREAD_BYTES);
      // a refused search and a timed-out one give theirs back too
      await expectCode(rx(f.svc, "a[ab]{20}[^ab]", { path: "ab.txt" }), "NOT_A_DIRECTORY");
      expect(dfaBudgetLeft()).toBe(DFA_THREAD_BYTES);
    } finally {
      setSearchWorkerEnabled(true);
    }
  });

  test("limit+1 early stop and truncation; glob filters which files are searched", async () => {
    const f = single({}, { max_search_results: 5 });
    for (let i = 0; i < 4; i++) write(f.root, `f${i}.txt`, "hit\nhit\n");
    write(f.root, "docs/a.md", "hit 1\n");
    write(f.root, "docs/sub/b.md", "hit 2\n");
    expect(await f.svc.searchText({ workdir: "w", query: "^hit$", regex: true, limit: 3 })).toMatchObject({ returned: 3, truncated: true });
    expect(await f.svc.searchText({ workdir: "w", query: "^hit$", regex: true, limit: 1000 })).toMatchObject({ returned: 5, truncated: true });
    expect(await f.svc.searchText({ workdir: "w", query: "^hit \\d$", regex: true, limit: 2 })).toMatchObject({ returned: 2, truncated: false });
    expect(at(await rx(f.svc, "^hit", { glob: "*.md" }))).toEqual(["docs/a.md:1", "docs/sub/b.md:1"]);
    expect(at(await rx(f.svc, "^hit", { glob: "docs/*.md" }))).toEqual(["docs/a.md:1"]);
    expect(at(await rx(f.svc, "^hit", { glob: "sub/**", path: "docs" }))).toEqual(["docs/sub/b.md:1"]);
  });

  test("files larger than the scan buffer keep exact line numbers; sparse matches among false positives are all found", async () => {
    const f = single();
    const lines = Array.from({ length: 200_000 }, (_, i) => (i % 50_000 === 49_999 ? `needle ${i + 1}` : `line ${i + 1} ${"z".repeat(i % 17)}`));
    write(f.root, "huge.txt", `${lines.join("\n")}\n`);
    const r = await rx(f.svc, "^needle \\d+$");
    expect(r.matches.map((m) => [m.line, m.text])).toEqual([
      [50_000, "needle 50000"],
      [100_000, "needle 100000"],
      [150_000, "needle 150000"],
      [200_000, "needle 200000"],
    ]);
    // `z\s+line` is true of every piece (the \s meets the \n) but of no line
    expect((await rx(f.svc, "z\\s+line")).matches).toEqual([]);
    expect((await rx(f.svc, "^line 123457 z+$")).matches.map((m) => m.line)).toEqual([123_457]);
  });
});

describe("refused patterns", () => {
  test("invalid and unsupported patterns are INVALID_ARGUMENT naming the problem; the length bound is 1024", async () => {
    const f = single();
    write(f.root, "a.txt", "abc\n");
    const msg = async (query: string) => (await expectCode(rx(f.svc, query), "INVALID_ARGUMENT")).message;
    expect(await msg("(abc")).toContain("regex does not compile: missing closing ): `(abc`");
    expect(await msg("a**")).toContain("invalid nested repetition operator");
    expect(await msg("[z-a]")).toContain("invalid character class range");
    expect(await msg("x{1001}")).toContain("invalid repeat count");
    expect(await msg("foo(?=bar)")).toContain("lookahead");
    expect(await msg("foo(?!bar)")).toContain("RE2 syntax does not support");
    expect(await msg("(?<=foo)bar")).toContain("lookbehind");
    expect(await msg("(?<!foo)bar")).toContain("lookbehind");
    expect(await msg("(a)\\1")).toContain("backreference");
    expect(await msg("(?P<n>a)\\k<n>")).toContain("backreference");
    expect(await msg("(?>a)")).toContain("atomic group");
    expect(await msg("a++")).toContain("possessive");
    expect(await msg("(?:.{1,250}z){4}")).toContain("too large once compiled");
    // the message quotes at most a bounded piece of the caller's pattern, never the (?m) we add
    const long = `(${"x".repeat(1000)}`;
    const m = await msg(long);
    expect(m).not.toContain("(?m)");
    expect(m.length).toBeLessThan(400);
    expect(await msg("a".repeat(1025))).toContain("at most 1024 characters");
    expect((await rx(f.svc, `${"a?".repeat(511)}bc`)).returned).toBe(1);
    await expectCode(rx(f.svc, "a\nb"), "INVALID_ARGUMENT");
    await expectCode(rx(f.svc, ""), "INVALID_ARGUMENT");
    // the literal mode never parses the query
    expect((await f.svc.searchText({ workdir: "w", query: "(abc" })).returned).toBe(0);
  });
});

const rg = Bun.which("rg");
describe("parity with ripgrep", () => {
  test.skipIf(rg === null)("same (path, line, text) set as rg for each pattern", async () => {
    // rg is absent on a bare machine; .ci/run installs it (apt-get install -y ripgrep).
    const base = tempDir();
    const root = path.join(base, "root");
    write(root, "code.ts", "export function alpha(x: number) {\n  return x + 1;\n}\nconst beta = alpha(2); // TODO fix\n\tindented\tTabs\n");
    write(root, "notes.md", "# Title\nTODO: write\nDone: 2024-05-01\ncafé au lait\nΣίσυφος\n\n");
    write(root, "crlf.txt", "first line\r\nTODO crlf\r\nlast\r\n");
    write(root, "nonl.txt", "one\ntrailing TODO");
    write(root, "bad.txt", Buffer.concat([Buffer.from("TODO bad \xff\n", "latin1"), Buffer.from("TODO good\n")]));
    write(root, "deep/a/b.rs", "fn main() { println!(\"TODO\"); }\n");
    const svc = createFileService(registry([workdir("w", root)], { max_search_results: 100 }));
    const patterns = ["TODO", "^TODO", "TODO$", "^\\s+\\w+", "\\bx\\b", "\\d{4}-\\d{2}-\\d{2}", "[[:upper:]][a-z]+", "\\p{Greek}+", "caf.", "^$", "(?i)todo", "fn\\s+\\w+\\(", "^.{0,5}$", "TODO\\r$", "l\\S*t"];
    for (const pattern of patterns) {
      const p = Bun.spawnSync([rg as string, "--json", "--no-messages", "--hidden", "--no-ignore", "-e", pattern, "."], { cwd: root });
      const want: string[] = [];
      for (const line of p.stdout.toString().split("\n")) {
        if (!line) continue;
        const ev = JSON.parse(line);
        if (ev.type !== "match" || typeof ev.data.lines.text !== "string") continue;
        want.push(`${String(ev.data.path.text).replace(/^\.\//, "")}:${ev.data.line_number}:${String(ev.data.lines.text).replace(/\n$/, "")}`);
      }
      const got = (await svc.searchText({ workdir: "w", query: pattern, regex: true, limit: 100 })).matches.map((m) => `${m.path}:${m.line}:${m.text}`);
      expect({ pattern, lines: got.sort() }).toEqual({ pattern, lines: want.sort() });
    }
    fs.rmSync(base, { recursive: true, force: true });
  });
});
