// The file tools' build-time tools/list entries (src/mcp/tools/fs/schemas.ts) may never drift from
// the run-time conversion of their zod schemas, and are used only at the limits they were made with.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { GENERATED_FILE, convertFsToolListing, renderGenerated } from "../../build/tool-schemas.ts";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import { createFileService } from "../../src/fs/index.ts";
import { buildToolSurface } from "../../src/mcp/surface.ts";
import { fileToolNames } from "../../src/mcp/surface-plan.ts";
import { GENERATED_LIMITS } from "../../src/mcp/tools/fs/schemas.generated.ts";
import { prebuiltListing, prebuiltListingText } from "../../src/mcp/tools/fs/schemas.ts";

describe("build-time tool listing", () => {
  test("the checked-in module is exactly what the generator writes from today's tool definitions", async () => {
    expect(readFileSync(GENERATED_FILE, "utf8")).toBe(renderGenerated(await convertFsToolListing()));
  });

  // Every surface a --workdir deployment can have: read-only, read-write, binary, read-write binary.
  for (const [name, specs, binary] of [
    ["read-only", ["a=/a"], false],
    ["read-write", ["a=/a:rw", "b=/b"], false],
    ["binary read-only", ["a=/a"], true],
    ["binary read-write", ["a=/a:rw", "b=/b"], true],
  ] as const) {
    test(`a ${name} --workdir deployment lists every file tool byte-identical to the run-time conversion`, async () => {
      const { registry } = await registryFromWorkdirArgs([...specs], "/");
      registry.workdirs[0]!.binary_transfer_enabled = binary;
      const files = createFileService(registry);
      const limits = files.limits();
      const prebuilt = prebuiltListing(limits);
      expect(prebuilt).toBeDefined();
      const fromZod = buildToolSurface(registry, { files, limits }).map((t) => t.listing());
      const names = fileToolNames(registry);
      expect(fromZod.map((t) => t.name)).toEqual(names);
      expect(JSON.stringify(names.map((n) => prebuilt![n]))).toBe(JSON.stringify(fromZod));
      // The opening writes the entries' text as it is (src/mcp/opening.ts): the same bytes.
      const texts = prebuiltListingText(limits)!;
      expect(`[${names.map((n) => texts[n]).join(",")}]`).toBe(JSON.stringify(fromZod));
      files.close();
    });
  }

  test("the build-time entries are exactly the tools a read-write binary deployment lists, in its order", async () => {
    const { registry } = await registryFromWorkdirArgs(["a=/a:rw"], "/");
    registry.workdirs[0]!.binary_transfer_enabled = true;
    expect(Object.keys(prebuiltListing({ ...GENERATED_LIMITS })!)).toEqual(fileToolNames(registry));
  });

  test("any other limits get no build-time entries", () => {
    const base = { ...GENERATED_LIMITS };
    expect(prebuiltListing(base)).toBeDefined();
    expect(prebuiltListingText(base)).toBeDefined();
    for (const key of Object.keys(base) as (keyof typeof base)[]) {
      expect(prebuiltListing({ ...base, [key]: base[key] + 1 })).toBeUndefined();
      expect(prebuiltListingText({ ...base, [key]: base[key] + 1 })).toBeUndefined();
    }
    expect(prebuiltListing({ ...base, extra: 1 } as typeof base)).toBeUndefined();
  });
});
