// The file tools' build-time JSON Schemas (src/mcp/tools/fs/schemas.ts) may never drift from the
// run-time conversion of their zod schemas, and are used only at the limits they were made with.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { GENERATED_FILE, convertFsToolSchemas, renderGenerated } from "../../build/tool-schemas.ts";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import { createFileService } from "../../src/fs/index.ts";
import { buildToolSurface } from "../../src/mcp/surface.ts";
import { GENERATED_LIMITS } from "../../src/mcp/tools/fs/schemas.generated.ts";
import { prebuiltSchemas } from "../../src/mcp/tools/fs/schemas.ts";

describe("build-time tool schemas", () => {
  test("the checked-in module is exactly what the generator writes from today's zod schemas", async () => {
    expect(readFileSync(GENERATED_FILE, "utf8")).toBe(renderGenerated(await convertFsToolSchemas()));
  });

  test("a --workdir deployment lists every file tool byte-identical to the run-time conversion", async () => {
    const { registry } = await registryFromWorkdirArgs(["a=/a:rw", "b=/b"], "/");
    registry.workdirs[0]!.binary_transfer_enabled = true;
    const files = createFileService(registry);
    const limits = files.limits();
    const prebuilt = prebuiltSchemas(limits);
    expect(prebuilt).toBeDefined();
    const fromBuild = buildToolSurface(registry, { files, limits }).map((t) => t.listing(prebuilt![t.name]));
    const fromZod = buildToolSurface(registry, { files, limits }).map((t) => t.listing());
    expect(fromBuild.map((t) => t.name).sort()).toEqual(Object.keys(prebuilt!).sort());
    expect(JSON.stringify(fromBuild)).toBe(JSON.stringify(fromZod));
    files.close();
  });

  test("any other limits get no build-time schemas", () => {
    const base = { ...GENERATED_LIMITS };
    expect(prebuiltSchemas(base)).toBeDefined();
    for (const key of Object.keys(base) as (keyof typeof base)[]) {
      expect(prebuiltSchemas({ ...base, [key]: base[key] + 1 })).toBeUndefined();
    }
    expect(prebuiltSchemas({ ...base, extra: 1 } as typeof base)).toBeUndefined();
  });
});
