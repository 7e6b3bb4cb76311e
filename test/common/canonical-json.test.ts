import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { canonicalJson, canonicalJsonPretty } from "../../src/common/canonical-json.ts";

describe("canonical JSON", () => {
  test("keys sorted at every depth by UTF-16 code unit, undefined keys dropped, arrays kept in order", () => {
    const value = { b: 1, a: { z: [3, { y: true, x: null }], é: "e", Z: undefined }, "": 0 };
    expect(canonicalJson(value)).toBe('{"":0,"a":{"z":[3,{"x":null,"y":true}],"é":"e"},"b":1}');
    expect(canonicalJsonPretty({ b: 1, a: 2 })).toBe('{\n  "a": 2,\n  "b": 1\n}\n');
  });

  test("the same content in any key order hashes the same", () => {
    const h = (v: unknown) => createHash("sha256").update(canonicalJson(v)).digest("hex");
    expect(h({ runtime: "acp", workdir: "app", prompt: "x" })).toBe(h({ prompt: "x", workdir: "app", runtime: "acp" }));
  });

  test("a non-finite number is refused, never written as null", () => {
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow(TypeError);
    expect(() => canonicalJson([Number.NaN])).toThrow(TypeError);
  });
});
