// The lists of search functions kept below JavaScriptCore's FTL tier (src/fs/search/scan-tiers.ts,
// walk-tiers.ts) name real functions: a renamed or removed method would otherwise leave an
// `undefined` there that the marker skips, silently bringing back the first-search JIT cost.
import { describe, expect, test } from "bun:test";
import { scanHotPath } from "../../src/fs/search/scan-tiers.ts";
import { walkHotPath } from "../../src/fs/search/walk-tiers.ts";

describe("FTL hint lists", () => {
  for (const [name, list] of [["scan", scanHotPath()], ["walk", walkHotPath()]] as const) {
    test(`${name}: every entry is a distinct function`, () => {
      expect(list.length).toBeGreaterThan(0);
      for (const [i, f] of list.entries()) expect([i, typeof f]).toEqual([i, "function"]);
      expect(new Set(list).size).toBe(list.length);
    });
  }
  test("the two lists do not overlap (each thread marks what it runs)", () => {
    const scan = new Set(scanHotPath());
    expect(walkHotPath().filter((f) => scan.has(f))).toEqual([]);
  });
});
