// search_text contract on a seeded tree, glob cases, limits, long lines, the 2 KiB text cap,
// deadline, and a black-box parity check against real ripgrep when it is installed.
import { beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode, registry, single, tempDir, workdir, write } from "./helpers.ts";

function seed(root: string): void {
  write(root, "big.txt", `${"filler line\n".repeat(5000)}needle in big\n`);
  write(root, "crlf.txt", "first\r\nneedle crlf\r\nlast\r\n");
  write(root, "nonl.txt", "one\nneedle without newline");
  write(root, "badutf.txt", Buffer.concat([Buffer.from("needle "), Buffer.from([0xff, 0xfe]), Buffer.from(" bad\n")]));
  write(root, "mixed.txt", Buffer.concat([Buffer.from("needle ok line\n"), Buffer.from([0xc3, 0x28]), Buffer.from(" needle bad line\nneedle again\n")]));
  write(root, "nul.txt", Buffer.from("needle before nul\n\0after\n"));
  write(root, "docs/x.md", "Needle in x\nneedle lower\n");
  write(root, "docs/sub/y.md", "needle in y\n");
  write(root, "docs/sub/z.txt", "needle in z\n");
  write(root, ".git/hidden.txt", "needle in git\n");
  write(root, ".hg/store.txt", "needle in hg\n");
  write(root, "src/.svn/entries", "needle in svn\n");
  write(root, "cjk.txt", "前needle後\n");
}

const paths = (r: { matches: { path: string }[] }) => r.matches.map((m) => m.path).sort();

describe("search contract", () => {
  let svc: FileService;
  let hidden: FileService;
  let root: string;
  beforeAll(() => {
    const base = tempDir();
    root = path.join(base, "root");
    seed(root);
    svc = createFileService(registry([workdir("w", root)]));
    hidden = createFileService(registry([workdir("w", root, { allow_hidden: true })]));
  });

  test("the seeded tree: CR kept, no final newline matches, bad UTF-8 lines never match, NUL suppresses small files, VCS dirs never", async () => {
    const r = await hidden.searchText({ workdir: "w", query: "needle" });
    expect(r.truncated).toBe(false);
    const byPath = new Map<string, { line: number; text: string }[]>();
    for (const m of r.matches) byPath.set(m.path, [...(byPath.get(m.path) ?? []), { line: m.line, text: m.text }]);
    expect(byPath.get("big.txt")).toEqual([{ line: 5001, text: "needle in big" }]);
    expect(byPath.get("crlf.txt")).toEqual([{ line: 2, text: "needle crlf\r" }]);
    expect(byPath.get("nonl.txt")).toEqual([{ line: 2, text: "needle without newline" }]);
    expect(byPath.has("badutf.txt")).toBe(false);
    expect(byPath.get("mixed.txt")).toEqual([
      { line: 1, text: "needle ok line" },
      { line: 3, text: "needle again" },
    ]);
    expect(byPath.has("nul.txt")).toBe(false);
    expect(byPath.get("docs/x.md")).toEqual([{ line: 2, text: "needle lower" }]);
    expect(byPath.get("cjk.txt")).toEqual([{ line: 1, text: "前needle後" }]);
    for (const p of byPath.keys()) expect(p.startsWith(".git") || p.startsWith(".hg") || p.includes(".svn")).toBe(false);
    expect(r.returned).toBe(r.matches.length);
    // not even as the search root
    expect((await hidden.searchText({ workdir: "w", path: ".git", query: "needle" })).matches).toEqual([]);
    expect((await hidden.searchText({ workdir: "w", path: "src/.svn", query: "needle" })).matches).toEqual([]);
    await expectCode(hidden.searchText({ workdir: "w", path: ".git/hidden.txt", query: "needle" }), "NOT_A_DIRECTORY");
  });

  test("case-insensitive is casefold", async () => {
    const r = await svc.searchText({ workdir: "w", query: "NEEDLE IN", case_sensitive: false });
    expect(paths(r)).toEqual(["big.txt", "docs/sub/y.md", "docs/sub/z.txt", "docs/x.md"]);
    const greek = single();
    write(greek.root, "g.txt", "ΣΊΣΥΦΟΣ\nstraße\n");
    expect((await greek.svc.searchText({ workdir: "w", query: "σίσυφος", case_sensitive: false })).matches.map((m) => m.line)).toEqual([1]);
    expect((await greek.svc.searchText({ workdir: "w", query: "STRASSE", case_sensitive: true })).matches).toEqual([]);
  });

  test("glob cases relative to the search root", async () => {
    const q = async (glob: string, p = "") => paths(await svc.searchText({ workdir: "w", query: "needle", glob, path: p }));
    expect(await q("docs/*.md")).toEqual(["docs/x.md"]);
    expect(await q("*.md")).toEqual(["docs/sub/y.md", "docs/x.md"]);
    expect(await q("**/y.md")).toEqual(["docs/sub/y.md"]);
    expect(await q("docs/**")).toEqual(["docs/sub/y.md", "docs/sub/z.txt", "docs/x.md"]);
    expect(await q("sub/*.md", "docs")).toEqual(["docs/sub/y.md"]);
    expect(await q("docs/*.md", "docs")).toEqual([]);
    expect(await q("[cn]*.txt")).toEqual(["cjk.txt", "crlf.txt", "nonl.txt"]);
  });

  test("search root checks", async () => {
    await expectCode(svc.searchText({ workdir: "w", path: "big.txt", query: "x" }), "NOT_A_DIRECTORY");
    await expectCode(svc.searchText({ workdir: "w", path: "missing", query: "x" }), "PATH_NOT_FOUND");
    await expectCode(svc.searchText({ workdir: "w", path: ".git", query: "x" }), "HIDDEN_PATH_NOT_ALLOWED");
    await expectCode(svc.searchText({ workdir: "w", query: "" }), "INVALID_ARGUMENT");
    await expectCode(svc.searchText({ workdir: "w", query: "a\nb" }), "INVALID_ARGUMENT");
    // repeated directory names are not collapsed in result paths
    const f = single();
    write(f.root, "foo/foo/x.txt", "needle\n");
    expect(paths(await f.svc.searchText({ workdir: "w", path: "foo", query: "needle" }))).toEqual(["foo/foo/x.txt"]);
  });

  test("limit+1 early stop and truncation", async () => {
    const f = single({}, { max_search_results: 5 });
    for (let i = 0; i < 4; i++) write(f.root, `f${i}.txt`, "hit\nhit\n");
    const r = await f.svc.searchText({ workdir: "w", query: "hit", limit: 3 });
    expect(r).toMatchObject({ returned: 3, truncated: true });
    const clamped = await f.svc.searchText({ workdir: "w", query: "hit", limit: 1000 });
    expect(clamped).toMatchObject({ returned: 5, truncated: true });
    const exact = single();
    write(exact.root, "a.txt", "hit\nhit\n");
    expect(await exact.svc.searchText({ workdir: "w", query: "hit", limit: 2 })).toMatchObject({ returned: 2, truncated: false });
  });

  test("search_max_file_bytes skips only the big file", async () => {
    const f = single({}, { search_max_file_bytes: 50 });
    write(f.root, "small.txt", "needle\n");
    write(f.root, "large.txt", `needle\n${"x".repeat(100)}\n`);
    expect(paths(await f.svc.searchText({ workdir: "w", query: "needle" }))).toEqual(["small.txt"]);
  });
});

describe("large inputs", () => {
  test("NUL after the first 64 KiB block keeps earlier matches and drops later ones", async () => {
    const f = single();
    const head = "needle early\n" + "x".repeat(70_000) + "\n";
    const body = Buffer.concat([Buffer.from(head), Buffer.from("needle late\n"), Buffer.alloc(10), Buffer.from("needle after nul\n")]);
    write(f.root, "n.bin", body);
    const r = await f.svc.searchText({ workdir: "w", query: "needle" });
    expect(r.matches.map((m) => m.text)).toEqual(["needle early"]);
  });

  test("files larger than the scan buffer keep exact line numbers across buffer refills", async () => {
    const f = single();
    const lines = Array.from({ length: 200_000 }, (_, i) => (i % 50_000 === 49_999 ? `needle ${i + 1}` : `line ${i + 1} ${"z".repeat(i % 17)}`));
    write(f.root, "huge.txt", `${lines.join("\n")}\n`);
    const r = await f.svc.searchText({ workdir: "w", query: "needle" });
    expect(r.matches.map((m) => [m.line, m.text])).toEqual([
      [50_000, "needle 50000"],
      [100_000, "needle 100000"],
      [150_000, "needle 150000"],
      [200_000, "needle 200000"],
    ]);
  });

  test("line numbers stay exact when matches are sparse across refills, after a streamed long line, and in neighbouring buffers", async () => {
    const f = single();
    // ~6 MB: matches far apart (buffers with none between them), two in one late buffer, a 1.5 MB line in the middle
    const want = new Set([3, 40_001, 40_002, 90_000, 150_000, 150_003, 199_999]);
    const lines: string[] = [];
    for (let i = 1; i <= 200_000; i++) {
      if (i === 120_000) lines.push("y".repeat(1_500_000));
      else lines.push(want.has(i) ? `Needle at ${i}` : `filler ${i} ${"q".repeat(i % 23)}`);
    }
    write(f.root, "sparse.txt", `${lines.join("\n")}\n`);
    const expected = [...want].sort((a, b) => a - b).map((n) => [n, `Needle at ${n}`]);
    const cs = await f.svc.searchText({ workdir: "w", query: "Needle" });
    expect(cs.matches.map((m) => [m.line, m.text])).toEqual(expected);
    const ci = await f.svc.searchText({ workdir: "w", query: "nEEDLE", case_sensitive: false });
    expect(ci.matches.map((m) => [m.line, m.text])).toEqual(expected);
    const limited = await f.svc.searchText({ workdir: "w", query: "Needle", limit: 4 });
    expect(limited.matches.map((m) => m.line)).toEqual([3, 40_001, 40_002, 90_000]);
  });

  test("a match text is capped at 2 KiB on a UTF-8 boundary; a multi-MB line is streamed", async () => {
    const f = single();
    const long = `${"é".repeat(1500)}needle${"ü".repeat(1500)}`;
    write(f.root, "long.txt", `short\n${long}\n`);
    const giant = `${"a".repeat(3 * 1024 * 1024)}needle${"b".repeat(1024 * 1024)}`;
    write(f.root, "giant.txt", `first\n${giant}\nneedle after\n`);
    write(f.root, "giantbad.txt", Buffer.concat([Buffer.from("x".repeat(2 * 1024 * 1024)), Buffer.from([0xff]), Buffer.from("needle\nneedle good\n")]));
    const r = await f.svc.searchText({ workdir: "w", query: "needle" });
    const byPath = new Map(r.matches.map((m) => [`${m.path}:${m.line}`, m]));
    const l = byPath.get("long.txt:2");
    expect(l?.text_truncated).toBe(true);
    expect(Buffer.byteLength(l?.text ?? "")).toBeLessThanOrEqual(2048);
    expect(long.startsWith(l?.text ?? "x")).toBe(true);
    const g = byPath.get("giant.txt:2");
    expect(g?.text_truncated).toBe(true);
    expect(g?.text).toBe("a".repeat(2048));
    expect(byPath.get("giant.txt:3")?.text).toBe("needle after");
    expect(byPath.has("giantbad.txt:1")).toBe(false);
    expect(byPath.get("giantbad.txt:2")?.text).toBe("needle good");
    expect(r.matches.find((m) => m.path === "long.txt" && m.line === 1)).toBeUndefined();
    const ci = await f.svc.searchText({ workdir: "w", query: "NEEDLE", case_sensitive: false, glob: "giant.txt" });
    expect(ci.matches.map((m) => m.line)).toEqual([2, 3]);
  });

  test("the deadline yields SEARCH_TIMEOUT; an aborted signal cancels", async () => {
    const f = single({}, { search_timeout_seconds: 0 });
    for (let i = 0; i < 50; i++) write(f.root, `d${i}/f.txt`, "x\n".repeat(1000));
    await expectCode(f.svc.searchText({ workdir: "w", query: "needle" }), "SEARCH_TIMEOUT");
  });
});

const rg = Bun.which("rg");
describe("parity with ripgrep", () => {
  test.skipIf(rg === null)("same (path, line, text) set as rg --fixed-strings for every glob", async () => {
    // rg is absent on a bare machine; .ci/run installs it (apt-get install -y ripgrep).
    const base = tempDir();
    const root = path.join(base, "root");
    seed(root);
    fs.rmSync(path.join(root, ".git"), { recursive: true });
    fs.rmSync(path.join(root, ".hg"), { recursive: true });
    fs.rmSync(path.join(root, "src/.svn"), { recursive: true });
    write(root, "a/b/c/deep.rs", "fn needle() {}\n");
    write(root, "a/needle.md", "# needle\n");
    write(root, "[x].txt", "needle bracket\n");
    write(root, "tab\tname.txt", "needle tab\n");
    const svc = createFileService(registry([workdir("w", root)], { max_search_results: 100 }));
    const globs = [null, "*.md", "docs/*.md", "**/y.md", "docs/**", "a/**/*.rs", "*.txt", "[cd]*", "[!c]*.txt", "?onl.txt", "**/sub/*", "a/*", "a/**", "*needle*", "docs/sub/*.md", "[x].txt", "\\[x\\].txt"];
    for (const glob of globs) {
      if (glob === "\\[x\\].txt") continue; // escapes differ by design (no escapes in our dialect)
      const args = ["--fixed-strings", "--json", "--no-messages", "--hidden", "--no-ignore", "--max-filesize", "52428800"];
      if (glob !== null) args.push("--glob", glob);
      args.push("--", "needle", ".");
      const p = Bun.spawnSync([rg as string, ...args], { cwd: root });
      const want: string[] = [];
      for (const line of p.stdout.toString().split("\n")) {
        if (!line) continue;
        const ev = JSON.parse(line);
        if (ev.type !== "match") continue;
        // rg reports an undecodable line as base64 `bytes`; the contract says such a line never matches
        if (typeof ev.data.lines.text !== "string") continue;
        const rel = String(ev.data.path.text).replace(/^\.\//, "");
        const text = String(ev.data.lines.text).replace(/\n$/, "");
        want.push(`${rel}:${ev.data.line_number}:${text}`);
      }
      const got = (await svc.searchText({ workdir: "w", query: "needle", glob, limit: 100 })).matches.map((m) => `${m.path}:${m.line}:${m.text}`);
      expect({ glob, lines: got.sort() }).toEqual({ glob, lines: want.sort() });
      if (glob === null) expect(want.length).toBeGreaterThan(8);
    }
  });
});

describe("cancellation", () => {
  test("an aborted signal ends the search with SEARCH_FAILED", async () => {
    const f = single();
    write(f.root, "a.txt", "needle\n");
    const ac = new AbortController();
    ac.abort();
    await expectCode(f.svc.searchText({ workdir: "w", query: "needle" }, ac.signal), "SEARCH_FAILED");
    expect((await f.svc.searchText({ workdir: "w", query: "needle" }, new AbortController().signal)).returned).toBe(1);
  });
});

describe("case-insensitive paths", () => {
  test("asciiLower (SWAR) equals a byte-by-byte lowercase for every ASCII byte, aligned or not", async () => {
    const { asciiLower } = await import("../../src/fs/search/scan-text.ts");
    const src = Buffer.alloc(4099);
    for (let i = 0; i < src.length; i++) src[i] = i % 128;
    const want = Buffer.from(src.map((c) => (c >= 65 && c <= 90 ? c | 32 : c)));
    for (const off of [0, 1, 3]) {
      const s = Buffer.from(src.subarray(off));
      const d = Buffer.alloc(s.length);
      asciiLower(s, d);
      expect(d.equals(want.subarray(off))).toBe(true);
      const unaligned = src.subarray(off);
      const d2 = Buffer.alloc(unaligned.length + 1).subarray(1);
      asciiLower(unaligned, d2);
      expect(d2.equals(want.subarray(off))).toBe(true);
    }
  });

  test("ASCII fast path and Unicode path agree on what matches", async () => {
    const f = single();
    write(f.root, "ascii.txt", "Hello WORLD\nnothing\nhello world again\n");
    write(f.root, "uni.txt", "Ünïcode HELLO World\nplain\n");
    write(f.root, "kelvin.txt", "temperature 5 \u212Aelvin\n");
    write(f.root, "bad.txt", Buffer.concat([Buffer.from("HELLO WORLD \xff\n", "latin1"), Buffer.from("hello world ok\n")]));
    const r = await f.svc.searchText({ workdir: "w", query: "HELLO world", case_sensitive: false });
    expect(r.matches.map((m) => `${m.path}:${m.line}:${m.text}`).sort()).toEqual([
      "ascii.txt:1:Hello WORLD",
      "ascii.txt:3:hello world again",
      "bad.txt:2:hello world ok",
      "uni.txt:1:Ünïcode HELLO World",
    ]);
    const k = await f.svc.searchText({ workdir: "w", query: "KELVIN", case_sensitive: false });
    expect(k.matches.map((m) => m.path)).toEqual(["kelvin.txt"]);
    const ü = await f.svc.searchText({ workdir: "w", query: "üNÏCODE", case_sensitive: false });
    expect(ü.matches.map((m) => m.line)).toEqual([1]);
  });
});
