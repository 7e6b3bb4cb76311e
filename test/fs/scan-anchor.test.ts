// The case-insensitive prefilter (src/fs/search/scan-anchor.ts) never rules out a buffer that holds the
// query in any casing (checked against lowercase-and-search on random queries and texts with
// planted, randomly cased matches), picks few spellings, and search_text with case_sensitive=false
// still finds exactly the case-folded matches, in files where only the anchor occurs too.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { foldAnchors, mayHold, UNICODE_REACHABLE } from "../../src/fs/search/scan-anchor.ts";
import { fold } from "../../src/fs/search/scan-text.ts";
import { createFileService } from "../../src/fs/index.ts";
import { registry, tempDir, workdir, write } from "./helpers.ts";

const lower = (s: string) => Buffer.from(s.toLowerCase(), "latin1");
const spellings = (q: string) => foldAnchors(lower(q)).spellings.map((b) => b.toString("latin1"));

describe("foldAnchors", () => {
  test("prefers a window without letters, then the longest", () => {
    expect(spellings("zq-no-such-token-7781")).toEqual(["-7781"]);
    expect(spellings("x=1;")).toEqual(["x=1;", "X=1;"]);
  });
  test("an all-letter query takes 3 letters (8 spellings); short queries are taken whole", () => {
    expect(spellings("TODO")).toEqual(["tod", "Tod", "tOd", "TOd", "toD", "ToD", "tOD", "TOD"]);
    expect(spellings("a")).toEqual(["a", "A"]);
    expect(spellings("7")).toEqual(["7"]);
    expect(spellings("Ab")).toHaveLength(4);
  });
  test("never more than 8 spellings, each as long as its window", () => {
    for (const q of ["useState", "function", "abcdefghijklmnopqrstuvwxyz", "a1b2c3d4e5", "HTTP/1.1 200 OK"]) {
      const s = spellings(q);
      expect(s.length).toBeLessThanOrEqual(8);
      expect(new Set(s.map((x) => x.length)).size).toBe(1);
      expect(q.toLowerCase()).toContain(s[0] as string);
    }
  });
});

describe("which ASCII bytes non-ASCII text can fold to", () => {
  test("exactly the letters UNICODE_REACHABLE names, never a digit or punctuation", () => {
    const reached = new Set<string>();
    for (let cp = 0x80; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      for (const ch of fold(String.fromCodePoint(cp))) if (ch.charCodeAt(0) < 0x80) reached.add(ch);
    }
    expect([...reached].sort().join("")).toBe(UNICODE_REACHABLE);
  });
  test("anyText: only windows without those letters rule out non-ASCII text", () => {
    expect(foldAnchors(lower("zq-no-such-token-7781")).anyText).toBe(true);
    expect(foldAnchors(lower("TODO")).anyText).toBe(false);
    expect(foldAnchors(lower("bug")).anyText).toBe(true);
    expect(foldAnchors(lower("Kelvin")).anyText).toBe(false);
  });
});

describe("mayHold is sound", () => {
  test("true whenever the lowered text holds the lowered query (random cases)", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.:/\n";
    const randomText = (n: number) => Array.from({ length: n }, () => alphabet[rnd(alphabet.length)]).join("");
    const recase = (s: string) => [...s].map((c) => (rnd(2) ? c.toUpperCase() : c.toLowerCase())).join("");
    let held = 0;
    for (let i = 0; i < 5000; i++) {
      const q = randomText(1 + rnd(20)).replace(/\n/g, "x");
      let text = randomText(rnd(400));
      if (rnd(2)) {
        const at = rnd(text.length + 1);
        text = text.slice(0, at) + recase(q) + text.slice(at);
      }
      const anchors = foldAnchors(lower(q)).spellings;
      const truth = text.toLowerCase().includes(q.toLowerCase());
      if (truth) {
        held++;
        expect([q, text, mayHold(Buffer.from(text, "latin1"), anchors)]).toEqual([q, text, true]);
      }
    }
    expect(held).toBeGreaterThan(1000);
  });
});

describe("search_text case_sensitive=false with the prefilter", () => {
  const base = tempDir();
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
  test("finds every casing, and a file holding only the anchor is no match", async () => {
    const root = path.join(base, "w");
    write(root, "a.txt", "one\nSee ZQ-No-Such-Token-7781 here\nthree\n");
    write(root, "b.txt", "only the anchor -7781 and zq-no-such-token-778 nearly\n");
    write(root, "c.txt", "zq-no-such-token-7781\nZQ-NO-SUCH-TOKEN-7781\n");
    write(root, "d.txt", "nothing\n".repeat(1000));
    // non-ASCII text: the anchor "-7781" rules it out only when absent; present, the line matches
    write(root, "e.txt", "ünïcödé ZQ-no-SUCH-token-7781 ✓\nünïcödé zq-no-such-token-778\n");
    const svc = createFileService(registry([workdir("w", root)]));
    try {
      const r = await svc.searchText({ workdir: "w", query: "zq-no-such-TOKEN-7781", case_sensitive: false });
      expect(r.matches.map((m) => `${m.path}:${m.line}:${m.text}`)).toEqual([
        "a.txt:2:See ZQ-No-Such-Token-7781 here",
        "c.txt:1:zq-no-such-token-7781",
        "c.txt:2:ZQ-NO-SUCH-TOKEN-7781",
        "e.txt:1:ünïcödé ZQ-no-SUCH-token-7781 ✓",
      ]);
      // a query whose anchor holds a letter non-ASCII text can fold to: K KELVIN SIGN still matches k
      write(root, "f.txt", "the \u212Aelvin scale\n");
      const kelvin = await svc.searchText({ workdir: "w", query: "kelvin", case_sensitive: false });
      expect(kelvin.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["f.txt:1"]);
      const todo = await svc.searchText({ workdir: "w", query: "NoThInG", case_sensitive: false, limit: 2 });
      expect(todo.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["d.txt:1", "d.txt:2"]);
      expect(todo.truncated).toBe(true);
    } finally {
      svc.close();
    }
  });
});
