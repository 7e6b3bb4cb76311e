// The frame scanner against JSON.parse itself: for thousands of generated messages (nested
// arrays and objects, strings full of escaped quotes and backslashes, long names and values,
// compact and indented), fed whole or cut into pieces anywhere, the scanner counts exactly the
// values, strings and depth the parsed value has (each bound is met at its count and exceeded one
// below it), and reads back the top-level id and method, escaped member names included.
import { describe, expect, test } from "bun:test";
import { FrameScanner, type FrameBounds, MAX_MEMBER_BYTES, scanFrame } from "../../src/mcp/frame-scan.ts";

/** What the scanner must count, from the parsed value. */
function counts(v: unknown, depth = 1): FrameBounds {
  if (typeof v === "string") return { values: 1, strings: 1, depth: 0 };
  if (v === null || typeof v !== "object") return { values: 1, strings: 0, depth: 0 };
  const out = { values: 1, strings: 0, depth };
  const members: Array<[string | null, unknown]> = Array.isArray(v) ? v.map((x) => [null, x]) : Object.entries(v);
  for (const [name, x] of members) {
    if (name !== null) out.strings++;
    const c = counts(x, depth + 1);
    out.values += c.values;
    out.strings += c.strings;
    out.depth = Math.max(out.depth, c.depth);
  }
  return out;
}

let seed = 12345;
function rnd(n: number): number {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return (seed >>> 8) % n;
}

function value(depth: number): unknown {
  const r = rnd(100);
  if (depth > 5 || r < 30) {
    const s = rnd(10);
    if (s < 4) return `s\\"\\\\"${"\\\\\\\"".repeat(rnd(40))}é${"x".repeat(rnd(3) === 0 ? 300 : 3)}`;
    if (s < 7) return rnd(1_000_000) / 7;
    return s < 9 ? true : null;
  }
  if (r < 65) return Array.from({ length: rnd(5) }, () => value(depth + 1));
  return Object.fromEntries(Array.from({ length: rnd(5) }, (_, i) => [`k${i}"\\${"n".repeat(rnd(100))}`, value(depth + 1)]));
}

function feedInPieces(scanner: FrameScanner, b: Buffer, maxPiece: number): void {
  for (let from = 0; from < b.length; ) {
    const to = Math.min(b.length, from + 1 + rnd(maxPiece));
    scanner.feed(b, from, to);
    from = to;
  }
}

describe("FrameScanner", () => {
  test("counts exactly what JSON.parse builds, however the bytes are cut", () => {
    const loose = { values: 1e9, strings: 1e9, depth: 1e9 };
    for (let t = 0; t < 1500; t++) {
      const message = { jsonrpc: "2.0", params: value(0), id: rnd(2) === 0 ? `i"d${t}\\${"y".repeat(rnd(80))}` : t, method: `m"${t}` };
      const text = rnd(2) === 0 ? JSON.stringify(message) : JSON.stringify(message, null, 1);
      const b = Buffer.from(text);
      const want = counts(message);
      for (const bound of ["values", "strings", "depth"] as const) {
        const at = scanFrame(b, b.length, { ...loose, [bound]: want[bound] });
        const below = new FrameScanner({ ...loose, [bound]: want[bound] - 1 });
        feedInPieces(below, b, t % 2 === 0 ? 7 : 400);
        const over = below.finish();
        expect([text, bound, at.over]).toEqual([text, bound, undefined]);
        expect([text, bound, over.over]).toEqual([text, bound, bound]);
        for (const shape of [at, over]) {
          expect(JSON.parse(shape.idText!)).toEqual(message.id);
          expect(JSON.parse(shape.methodText!)).toEqual(message.method);
        }
      }
    }
  });

  test("members are found whatever their spelling and place; ids it cannot read back are reported as such", () => {
    const shape = (text: string) => scanFrame(Buffer.from(text), Buffer.byteLength(text));
    expect(shape('{"\\u0069d":7,"\\u006d\\u0065thod":"x","params":{"id":9,"method":"no"}}')).toEqual({ top: "object", hasId: true, hasMethod: true, idText: "7", methodText: '"x"' });
    // the last member of a name counts, as in JSON.parse
    expect(shape('{"id":1,"method":"a","id":"two"}').idText).toBe('"two"');
    // an id that is an object, or too long to keep, is there but unreadable
    expect(shape('{"id":{"x":1},"method":"a"}')).toEqual({ top: "object", hasId: true, hasMethod: true, methodText: '"a"' });
    expect(shape(`{"id":"${"z".repeat(MAX_MEMBER_BYTES)}","method":"a"}`).idText).toBeUndefined();
    expect(shape('{"method":"notifications/x"}')).toEqual({ top: "object", hasId: false, hasMethod: true, methodText: '"notifications/x"' });
    expect(shape(' [1,2]').top).toBe("array");
    expect(shape("5").top).toBe("other");
    expect(shape(" \r").top).toBe("none");
  });
});
