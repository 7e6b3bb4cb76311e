// `serve --workdir ALIAS=PATH[:rw]`: the zero-config source goes through the same validator.
import { afterAll, describe, expect, test } from "bun:test";
import { cleanupTempDirs } from "./helpers.ts";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import { documentAllows } from "../../src/config/schema.generated.ts";
import { checkRawDocument } from "../../src/config/schema.ts";
import { ServerfsError } from "../../src/errors.ts";

afterAll(cleanupTempDirs);

async function refused(specs: string[]): Promise<string> {
  try {
    await registryFromWorkdirArgs(specs, "/home/ann/checkout");
  } catch (err) {
    expect(err).toBeInstanceOf(ServerfsError);
    expect((err as ServerfsError).code).toBe("CONFIGURATION_ERROR");
    return (err as ServerfsError).message;
  }
  throw new Error("expected a CONFIGURATION_ERROR");
}

describe("registryFromWorkdirArgs", () => {
  test("read-only unless :rw; relative paths resolve against cwd; defaults as a config file", async () => {
    const { registry, source } = await registryFromWorkdirArgs(
      ["sample=examples/sample", "proj=/srv/proj:rw", "ro=/srv/ro:ro", "win=C:\\data"],
      "/home/ann/checkout",
    );
    expect(source).toEqual({ format: "cli", file: null });
    expect(registry.workdirs.map((w) => [w.alias, w.path, w.read_only])).toEqual([
      ["sample", "/home/ann/checkout/examples/sample", true],
      ["proj", "/srv/proj", false],
      ["ro", "/srv/ro", true],
      ["win", "C:\\data", true],
    ]);
    expect(registry.agent.enabled).toBe(false);
    expect(registry.workdirs[0]!.max_read_bytes).toBe(524_288);
  });

  test("the same rules as a config file", async () => {
    expect(await refused([])).toContain("at least one --workdir");
    expect(await refused(["noequals"])).toContain("--workdir: #1: expected ALIAS=PATH");
    expect(await refused(["=/x"])).toContain("#1: expected ALIAS=PATH");
    expect(await refused(["1bad=/x"])).toContain("--workdir: #1.alias: expected an alias");
    expect(await refused(["a=/x", "a=/y"])).toContain("#2.alias: duplicate alias");
    expect(await refused(["a=../up"])).toContain("#1.path: must not contain a '..' component");
    expect(await refused(["a=/srv/../etc:rw"])).toContain("'..'");
    expect(await refused(["a="])).toContain("#1.path: must not be empty");
    expect(await refused(Array.from({ length: 65 }, (_, i) => `w${i}=/w`))).toContain("1 to 64");
  });
});

describe("--workdir documents and the compiled check that skips the schema", () => {
  // serve --workdir does not load the schema when the build-time compiled check says the document
  // passes (src/config/schema.generated.ts); on every document --workdir can produce, the two agree.
  const aliases = [
    "a", "Z", "docs", "a-b_c9", "A".repeat(32), "A".repeat(33), "", "1a", "_a", "-a", "a b", "a.b", "a:b",
    "a/b", "a\n", "\na", "a\u0000", "ä", "aé", "a\u200b", "ａ", "a=b", "a\r",
  ];
  const doc = (names: string[], read_only = true) => ({ workdirs: names.map((alias) => ({ alias, path: "/srv/x", read_only })) });

  test.each(aliases)("alias %j: the same verdict as the schema, and the document unchanged", (alias) => {
    for (const d of [doc([alias]), doc(["first", alias], false)]) {
      const checked = checkRawDocument(d);
      expect(documentAllows(d)).toBe(checked.ok);
      if (checked.ok) expect(checked.doc).toEqual(d);
    }
  });

  test("workdir counts at and beyond the bounds", () => {
    for (const n of [0, 1, 63, 64, 65]) {
      const d = doc(Array.from({ length: n }, (_, i) => `w${i}`));
      expect(documentAllows(d)).toBe(checkRawDocument(d).ok);
    }
    expect(documentAllows(doc(Array.from({ length: 64 }, (_, i) => `w${i}`)))).toBe(true);
    expect(documentAllows(doc(Array.from({ length: 65 }, (_, i) => `w${i}`)))).toBe(false);
  });
});
