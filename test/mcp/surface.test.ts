// The tool surface as an MCP host sees it: which tools exist per deployment, their annotations,
// schemas and published limits, and the server's instructions.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import type { Registry } from "../../src/config/types.ts";
import { createFileService } from "../../src/fs/index.ts";
import { buildToolSurface } from "../../src/mcp/surface.ts";
import { HINTS, defineTool } from "../../src/mcp/tool.ts";
import { type Harness, connect, makeRegistry, removeDir, tempDir } from "./helpers.ts";
import { FILE_MUTATION_TOOLS, FILE_READ_TOOLS } from "../support/tool-names.ts";

const READ_TOOLS: readonly string[] = FILE_READ_TOOLS;
const MUTATION_TOOLS: readonly string[] = FILE_MUTATION_TOOLS;

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const EXPECTED_HINTS: Record<string, typeof READ> = {
  list_workdirs: READ,
  list_directory: READ,
  directory_tree: READ,
  find_files: READ,
  search_text: READ,
  read_text_file: READ,
  stat_file: READ,
  read_multiple_files: READ,
  read_media_file: READ,
  download_binary_file: READ,
  create_text_file: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  upload_binary_file: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  create_directory: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  edit_text_file: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete_file: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  delete_directory: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  move_file: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};

let root: string;
beforeAll(() => {
  root = tempDir();
  for (const d of ["a", "b", "c"]) fs.mkdirSync(path.join(root, d));
});
afterAll(() => removeDir(root));

async function toolNames(reg: ReturnType<typeof makeRegistry>): Promise<string[]> {
  const h = await connect(reg);
  try {
    return (await h.client.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await h.close();
  }
}

describe("tool surface per deployment", () => {
  test("a read-only deployment lists exactly the 9 read tools", async () => {
    const names = await toolNames(makeRegistry([{ alias: "a", path: path.join(root, "a") }]));
    expect(names).toEqual([...READ_TOOLS].sort());
  });

  test("a read-only deployment does not list move_file, and calling it anyway is refused with nothing moved", async () => {
    fs.writeFileSync(path.join(root, "a", "keep.txt"), "keep");
    const h = await connect(makeRegistry([{ alias: "a", path: path.join(root, "a") }]));
    try {
      expect((await h.client.listTools()).tools.map((t) => t.name)).not.toContain("move_file");
      const err = await h.client
        .callTool({ name: "move_file", arguments: { workdir: "a", source: "keep.txt", destination: "moved.txt", expected_revision: "v1:0000000000000000" } })
        .catch((e: unknown) => e);
      expect((err as { code?: number }).code).toBe(-32602);
    } finally {
      await h.close();
      expect(fs.readdirSync(path.join(root, "a"))).toEqual(["keep.txt"]);
      fs.rmSync(path.join(root, "a", "keep.txt"));
    }
  });

  test("one read-write workdir adds exactly the 6 mutation tools (15)", async () => {
    const names = await toolNames(
      makeRegistry([
        { alias: "a", path: path.join(root, "a") },
        { alias: "b", path: path.join(root, "b"), read_only: false },
      ]),
    );
    expect(names).toEqual([...READ_TOOLS, ...MUTATION_TOOLS].sort());
  });

  test("a read-write workdir with binary transfer lists all 17", async () => {
    const names = await toolNames(
      makeRegistry([{ alias: "a", path: path.join(root, "a"), read_only: false, binary_transfer_enabled: true }]),
    );
    expect(names).toEqual([...READ_TOOLS, ...MUTATION_TOOLS, "download_binary_file", "upload_binary_file"].sort());
  });

  test("binary transfer on a read-only workdir adds download only: upload could never succeed", async () => {
    const names = await toolNames(makeRegistry([{ alias: "a", path: path.join(root, "a"), binary_transfer_enabled: true }]));
    expect(names).toEqual([...READ_TOOLS, "download_binary_file"].sort());
  });

  test("agent tools join the surface only with the Bridge enabled and a workdir allowing a runtime", () => {
    const agentTool = defineTool({
      name: "probe_agent_tool",
      title: "Probe",
      description: "stands in for an Agent Bridge tool",
      hints: HINTS.read,
      input: z.strictObject({}),
      output: z.object({}),
      handler: async () => ({ structured: {} }),
    });
    const names = (reg: Registry) =>
      buildToolSurface(reg, { files: createFileService(reg), limits: createFileService(reg).limits() }, [agentTool]).map(
        (t) => t.name,
      );
    const wd = { alias: "a", path: path.join(root, "a") };
    const off = makeRegistry([wd]);
    expect(names(off)).not.toContain("probe_agent_tool");
    const enabledNoRuntime = makeRegistry([wd]);
    enabledNoRuntime.agent.enabled = true;
    expect(names(enabledNoRuntime)).not.toContain("probe_agent_tool");
    const runtimeButDisabled = makeRegistry([{ ...wd, agent_mode: "review", agent_runtimes: ["fake"] }]);
    expect(names(runtimeButDisabled)).not.toContain("probe_agent_tool");
    const on = makeRegistry([{ ...wd, agent_mode: "review", agent_runtimes: ["fake"] }]);
    on.agent.enabled = true;
    expect(names(on)).toEqual([...READ_TOOLS, "probe_agent_tool"]);
  });
});

describe("tool listing details", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await connect(
      makeRegistry(
        [{ alias: "a", path: path.join(root, "a"), read_only: false, binary_transfer_enabled: true }],
        { default_list_limit: 7, max_list_entries: 40, default_search_results: 300, max_search_results: 60, max_edits_per_call: 9 },
      ),
    );
  });
  afterAll(() => h.close());

  test("every tool carries exactly the four annotations of the reference table", async () => {
    const { tools } = await h.client.listTools();
    expect(tools.length).toBe(Object.keys(EXPECTED_HINTS).length);
    for (const tool of tools) {
      const { title: _title, ...hints } = tool.annotations ?? {};
      expect({ name: tool.name, hints }).toEqual({ name: tool.name, hints: EXPECTED_HINTS[tool.name]! });
      expect(tool.title?.length ?? 0).toBeGreaterThan(0);
      expect(tool.description?.length ?? 0).toBeGreaterThan(40);
    }
  });

  test("every tool publishes an object outputSchema admitting its success shape or {code, message}", async () => {
    const { tools } = await h.client.listTools();
    for (const tool of tools) {
      const schema = tool.outputSchema as { type: string; anyOf: Array<{ required?: string[]; type: string }> };
      expect(schema.type).toBe("object");
      expect(schema.anyOf.length).toBe(2);
      expect(schema.anyOf[1]!.required).toEqual(["code", "message"]);
      expect(schema.anyOf[0]!.type).toBe("object");
      expect("$schema" in schema).toBe(false);
    }
    const dl = tools.find((t) => t.name === "download_binary_file")!;
    const meta = (dl.outputSchema as unknown as { anyOf: Array<{ required: string[] }> }).anyOf[0]!;
    expect([...meta.required].sort()).toEqual(["mime_type", "path", "revision", "sha256", "size", "workdir"]);
  });

  test("input schemas are flat objects that refuse unknown keys", async () => {
    const { tools } = await h.client.listTools();
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect((tool.inputSchema as { additionalProperties?: boolean }).additionalProperties).toBe(false);
      if (tool.name !== "list_workdirs") expect(tool.inputSchema.required).toContain("workdir");
    }
  });

  test("configured limits are published as default and maximum", async () => {
    const { tools } = await h.client.listTools();
    const prop = (tool: string, name: string) =>
      (tools.find((t) => t.name === tool)!.inputSchema.properties as Record<string, Record<string, unknown>>)[name]!;
    expect(prop("list_directory", "limit")).toMatchObject({ default: 7, maximum: 40, minimum: 1, type: "integer" });
    // A default above the maximum is published as the maximum (min(DEFAULT, MAX)).
    expect(prop("find_files", "limit")).toMatchObject({ default: 60, maximum: 60 });
    expect(prop("search_text", "limit")).toMatchObject({ default: 60, maximum: 60 });
    expect(prop("read_text_file", "max_lines")).toMatchObject({ default: 200, maximum: 500 });
    expect(prop("edit_text_file", "edits")).toMatchObject({ maxItems: 9, minItems: 1 });
    expect(prop("search_text", "case_sensitive")).toMatchObject({ default: true });
    expect(prop("upload_binary_file", "overwrite")).toMatchObject({ default: false });
  });

  test("a limit above the published maximum is clamped, not refused", async () => {
    for (let i = 0; i < 45; i++) fs.writeFileSync(path.join(root, "a", `f${String(i).padStart(2, "0")}.txt`), "x");
    const res = await h.call("list_directory", { workdir: "a", limit: 100000 });
    const out = res.structuredContent as { limit: number; returned: number; has_more: boolean };
    expect(res.isError).toBeFalsy();
    expect(out.limit).toBe(40);
    expect(out.returned).toBe(40);
    expect(out.has_more).toBe(true);
    const dflt = (await h.call("list_directory", { workdir: "a" })).structuredContent as { limit: number; returned: number };
    expect(dflt).toMatchObject({ limit: 7, returned: 7 });
  });

  test("the server's instructions tell the assistant to call list_workdirs first", () => {
    const text = h.client.getInstructions() ?? "";
    expect(text).toContain("Call list_workdirs first");
    expect(h.client.getServerVersion()?.name).toBe("serverfs");
    expect(h.client.getServerCapabilities()?.tools).toBeDefined();
    expect(h.client.getServerCapabilities()?.resources).toBeDefined();
  });
});
