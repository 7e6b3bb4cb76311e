import { describe, expect, test } from "bun:test";
import path from "node:path";
import { isWithin } from "../../platform/paths.ts";

describe("isWithin", () => {
  test("POSIX", () => {
    const p = path.posix;
    expect(isWithin("/repo", "/repo", p)).toBe(true);
    expect(isWithin("/repo/", "/repo", p)).toBe(true);
    expect(isWithin("/repo/a/b", "/repo", p)).toBe(true);
    expect(isWithin("/repo/..cache", "/repo", p)).toBe(true);
    expect(isWithin("/repo2", "/repo", p)).toBe(false);
    expect(isWithin("/re", "/repo", p)).toBe(false);
    expect(isWithin("/repo/../etc", "/repo", p)).toBe(false);
    expect(isWithin("/", "/repo", p)).toBe(false);
    expect(isWithin("/anything", "/", p)).toBe(true);
    expect(isWithin("/repo/a", "/repo/", p)).toBe(true);
  });

  test("Windows: both separators, drive letters and case", () => {
    const w = path.win32;
    expect(isWithin("C:\\Users\\al\\x", "C:\\Users\\al", w)).toBe(true);
    expect(isWithin("c:/users/AL/x", "C:\\Users\\al", w)).toBe(true);
    expect(isWithin("C:\\Users\\alice", "C:\\Users\\al", w)).toBe(false);
    expect(isWithin("D:\\Users\\al\\x", "C:\\Users\\al", w)).toBe(false);
    expect(isWithin("C:\\Users\\al\\..\\bob", "C:\\Users\\al", w)).toBe(false);
  });
});
