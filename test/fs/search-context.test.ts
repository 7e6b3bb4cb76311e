// search_text context_lines on real files, in both modes: before/after at file start and end,
// adjacent and overlapping matches (each line shown once), CRLF, capped and undecodable context
// lines, context across the scan buffer's refills, the NUL cut, and the early stop. A reference
// model over the file's lines states the rule once and is checked against multi-buffer files.
import { describe, expect, test } from "bun:test";
import { expectCode, single, write } from "./helpers.ts";

type Svc = ReturnType<typeof single>["svc"];
interface M {
  path: string;
  line: number;
  text: string;
  before?: (string | null)[];
  after?: (string | null)[];
  context_truncated?: boolean;
}
const ctx = async (svc: Svc, query: string, n: number, more: Record<string, unknown> = {}) =>
  (await svc.searchText({ workdir: "w", query, context_lines: n, limit: 100, ...more })).matches as M[];
const shape = (ms: M[]) => ms.map((m) => ({ line: m.line, before: m.before, after: m.after }));

/** The documented rule: before = unseen lines among the n above; after = up to n lines, stopping before the next match. */
function model(lines: string[], isMatch: (l: string) => boolean, n: number) {
  const out: { line: number; before: string[]; after: string[] }[] = [];
  let shown = 0; // 1-based number of the last line shown
  for (let i = 0; i < lines.length; i++) {
    if (!isMatch(lines[i] as string)) continue;
    const line = i + 1;
    const from = Math.max(shown + 1, line - n);
    const before = lines.slice(from - 1, line - 1);
    const after: string[] = [];
    for (let j = i + 1; j < lines.length && after.length < n && !isMatch(lines[j] as string); j++) after.push(lines[j] as string);
    shown = line + after.length;
    out.push({ line, before, after });
  }
  return out;
}

describe("context_lines", () => {
  test("at file start and end, and a file that is one line", async () => {
    const f = single();
    write(f.root, "a.txt", "needle first\nl2\nl3\nl4\nl5\nneedle last");
    write(f.root, "one.txt", "needle alone\n");
    expect(shape(await ctx(f.svc, "needle", 2, { glob: "a.txt" }))).toEqual([
      { line: 1, before: [], after: ["l2", "l3"] },
      { line: 6, before: ["l4", "l5"], after: [] },
    ]);
    expect(shape(await ctx(f.svc, "needle", 10, { glob: "one.txt" }))).toEqual([{ line: 1, before: [], after: [] }]);
  });

  test("adjacent and overlapping matches: each line once, after stops before the next match; same in regex mode", async () => {
    const f = single();
    const lines = ["a", "b", "hit 3", "c", "hit 5", "hit 6", "d", "e", "f", "g", "h", "hit 12", "i"];
    write(f.root, "o.txt", `${lines.join("\n")}\n`);
    const want = [
      { line: 3, before: ["a", "b"], after: ["c"] },
      { line: 5, before: [], after: [] },
      { line: 6, before: [], after: ["d", "e"] },
      { line: 12, before: ["g", "h"], after: ["i"] },
    ];
    expect(want).toEqual(model(lines, (l) => l.startsWith("hit"), 2));
    expect(shape(await ctx(f.svc, "hit", 2))).toEqual(want);
    expect(shape(await ctx(f.svc, "^hit \\d+$", 2, { regex: true }))).toEqual(want);
    expect(shape(await ctx(f.svc, "HIT", 2, { case_sensitive: false }))).toEqual(want);
  });

  test("CRLF lines keep their \\r in context; undecodable context lines are null; long ones are capped", async () => {
    const f = single();
    write(f.root, "crlf.txt", "x\r\nneedle\r\ny\r\n");
    expect(shape(await ctx(f.svc, "needle", 1))).toEqual([{ line: 2, before: ["x\r"], after: ["y\r"] }]);
    write(f.root, "bad.txt", Buffer.concat([Buffer.from([0xff, 0x0a]), Buffer.from("needle\n"), Buffer.from("ok \xe9\n", "latin1")]));
    const bad = await ctx(f.svc, "needle", 1, { glob: "bad.txt" });
    expect(shape(bad)).toEqual([{ line: 2, before: [null], after: [null] }]);
    expect(bad[0]?.context_truncated).toBeUndefined();
    const long = "é".repeat(3000);
    write(f.root, "long.txt", `${long}\nneedle\nshort\n`);
    const l = (await ctx(f.svc, "needle", 1, { glob: "long.txt" }))[0] as M;
    expect(l.context_truncated).toBe(true);
    expect(Buffer.byteLength(l.before?.[0] as string)).toBe(2048);
    expect(long.startsWith(l.before?.[0] as string)).toBe(true);
    expect(l.after).toEqual(["short"]);
    // a context line longer than the scan buffer (streamed) is capped the same way
    write(f.root, "giant.txt", `needle\n${"g".repeat(3 * 1024 * 1024)}\nend\n`);
    const g = (await ctx(f.svc, "needle", 2, { glob: "giant.txt" }))[0] as M;
    expect(g.after).toEqual(["g".repeat(2048), "end"]);
    expect(g.context_truncated).toBe(true);
    const gr = (await ctx(f.svc, "^needle$", 2, { glob: "giant.txt", regex: true }))[0] as M;
    expect(gr.after).toEqual(["g".repeat(2048), "end"]);
  });

  test("context across the scan buffer's refills matches the model, in both modes", async () => {
    const f = single();
    // 100-byte lines: the first 1 MiB buffer ends after line 10485 and the second after line 20970,
    // so the after of 10484 and the before of 20973 cross a refill
    const lines = Array.from({ length: 25_000 }, (_, i) => {
      const n = i + 1;
      const tag = [10_484, 10_490, 10_491, 20_973, 25_000].includes(n) ? "HIT" : "row";
      return `${tag} ${String(n).padStart(6, "0")} `.padEnd(99, "-");
    });
    write(f.root, "big.txt", `${lines.join("\n")}\n`);
    for (const n of [1, 3, 10]) {
      const want = model(lines, (l) => l.startsWith("HIT"), n);
      expect(shape(await ctx(f.svc, "HIT", n))).toEqual(want);
      expect(shape(await ctx(f.svc, "^HIT \\d+", n, { regex: true }))).toEqual(want);
      expect(shape(await ctx(f.svc, "hit", n, { case_sensitive: false }))).toEqual(want);
    }
  });

  test("a NUL cut drops the context lines past the cut; the early stop keeps each returned match's context", async () => {
    const f = single();
    // "needle" is the last line ending before 65536; the lines after it run past the block
    const filler = `${"f".repeat(99)}\n`.repeat(655); // 65500 bytes
    const body = Buffer.concat([Buffer.from(filler.slice(0, -30) + "\n"), Buffer.from("needle\n"), Buffer.from("after1\n"), Buffer.from("x".repeat(100) + "\n"), Buffer.from("after3\n"), Buffer.alloc(1), Buffer.from("\n")]);
    expect(body.indexOf("needle\n") + 7 + 7).toBeLessThanOrEqual(65536);
    expect(body.indexOf("after3")).toBeGreaterThan(65536);
    write(f.root, "n.bin", body);
    expect(shape(await ctx(f.svc, "needle", 3)).map((m) => m.after)).toEqual([["after1"]]);
    expect(shape(await ctx(f.svc, "^needle$", 3, { regex: true })).map((m) => m.after)).toEqual([["after1"]]);
    const s = single();
    write(s.root, "a.txt", "p\nhit 1\nq\nr\nhit 2\ns\n");
    const r = await s.svc.searchText({ workdir: "w", query: "hit", context_lines: 2, limit: 1 });
    expect(r).toMatchObject({ returned: 1, truncated: true });
    expect(shape(r.matches as M[])).toEqual([{ line: 2, before: ["p"], after: ["q", "r"] }]);
  });

  test("without context_lines the output has no context fields; out-of-range values are INVALID_ARGUMENT", async () => {
    const f = single();
    write(f.root, "a.txt", "x\nneedle\ny\n");
    expect((await f.svc.searchText({ workdir: "w", query: "needle" })).matches).toEqual([{ path: "a.txt", line: 2, text: "needle" }]);
    expect((await f.svc.searchText({ workdir: "w", query: "needle", context_lines: 0 })).matches).toEqual([{ path: "a.txt", line: 2, text: "needle" }]);
    expect((await f.svc.searchText({ workdir: "w", query: "needle", context_lines: 10 })).matches).toEqual([{ path: "a.txt", line: 2, text: "needle", before: ["x"], after: ["y"] }]);
    for (const n of [11, -1, 1.5]) await expectCode(f.svc.searchText({ workdir: "w", query: "needle", context_lines: n }), "INVALID_ARGUMENT");
  });
});
