// The tool wrapper on its own: what happens to foreign errors, contract-breaking outputs and
// thrown ServerfsErrors, independent of any file operation. The tools here are real definitions
// made with the same defineTool every serverfs tool uses.
import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { ServerfsError } from "../../src/errors.ts";
import { createLogger } from "../../src/log.ts";
import { HINTS, type RequestExtra, type ToolRuntime, defineTool } from "../../src/mcp/tool.ts";
import { parseResourceUri, resourceUri } from "../../src/mcp/uri.ts";

function runtime(): { rt: ToolRuntime; lines: string[] } {
  const lines: string[] = [];
  return { rt: { logger: createLogger({ sink: (l) => lines.push(l) }), workdirs: new Set(["docs"]) }, lines };
}

const ctx = () => ({ signal: new AbortController().signal, extra: {} as RequestExtra });

function probeTool(behaviour: (n: number) => Promise<unknown>) {
  return defineTool({
    name: "probe",
    title: "Probe",
    description: "test tool",
    hints: HINTS.read,
    input: z.strictObject({ workdir: z.string(), n: z.number().int().default(1) }),
    output: z.object({ value: z.number().int() }),
    handler: async (args) => ({ structured: (await behaviour(args.n)) as { value: number } }),
  });
}

describe("tool wrapper", () => {
  test("a foreign error becomes the fixed INTERNAL_ERROR text; its message (a host path) goes nowhere", async () => {
    const { rt, lines } = runtime();
    const tool = probeTool(async () => {
      throw Object.assign(new Error("EACCES: permission denied, open '/srv/host/secret/path'"), { code: "EACCES" });
    });
    const res = await tool.call({ workdir: "docs" }, ctx(), rt);
    expect(res).toEqual({
      isError: true,
      content: [{ type: "text", text: "INTERNAL_ERROR: unexpected internal error" }],
      structuredContent: { code: "INTERNAL_ERROR", message: "unexpected internal error" },
    });
    const text = lines.join("");
    expect(text).not.toContain("/srv/host");
    expect(text).toContain('"errno":"EACCES"');
    expect(lines.filter((l) => l.includes('"tool_call"'))).toHaveLength(1);
  });

  test("an output that breaks the declared schema is INTERNAL_ERROR, never sent to the client", async () => {
    const { rt, lines } = runtime();
    const tool = probeTool(async () => ({ value: "not-a-number-SECRET" }));
    const res = await tool.call({ workdir: "docs" }, ctx(), rt);
    expect((res.structuredContent as { code: string }).code).toBe("INTERNAL_ERROR");
    expect(lines.join("")).toContain('"event":"tool_output_invalid"');
    expect(lines.join("")).not.toContain("SECRET");
  });

  test("a ServerfsError maps to `CODE: message` and {code, message}; unknown output keys are stripped", async () => {
    const { rt } = runtime();
    const failing = probeTool(async () => {
      throw new ServerfsError("PATH_NOT_FOUND", "docs:x does not exist");
    });
    expect(await failing.call({ workdir: "docs" }, ctx(), rt)).toEqual({
      isError: true,
      content: [{ type: "text", text: "PATH_NOT_FOUND: docs:x does not exist" }],
      structuredContent: { code: "PATH_NOT_FOUND", message: "docs:x does not exist" },
    });
    const extra = probeTool(async (n) => ({ value: n, host_path: "/srv/leak" }));
    const res = await extra.call({ workdir: "docs", n: 4 }, ctx(), rt);
    expect(res.structuredContent).toEqual({ value: 4 });
    expect(JSON.stringify(res)).not.toContain("/srv/leak");
  });

  test("the listing publishes all four hints with openWorldHint=false", () => {
    const listing = probeTool(async () => ({ value: 1 })).listing();
    expect(listing.annotations).toEqual({
      title: "Probe",
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(listing.inputSchema).toMatchObject({ type: "object", required: ["workdir"], additionalProperties: false });
  });
});

describe("serverfs:// URIs", () => {
  test("each segment is percent-encoded with '/' kept, and parsing inverts it", () => {
    expect(resourceUri("media", "a b.bin")).toBe("serverfs://media/a%20b.bin");
    expect(resourceUri("docs", "dir one/数据 #1?.txt")).toBe("serverfs://docs/dir%20one/%E6%95%B0%E6%8D%AE%20%231%3F.txt");
    for (const p of ["a b.bin", "dir one/数据 #1?.txt", "", "x%y"]) {
      expect(parseResourceUri(resourceUri("Docs", p))).toEqual({ workdir: "Docs", path: p });
    }
  });

  test("foreign schemes, queries and bad escapes are INVALID_ARGUMENT", () => {
    for (const uri of ["file:///etc/passwd", "serverfs://docs/a?b", "serverfs://docs/%E0%A4%A", "http://docs/x"]) {
      let code = "";
      try {
        parseResourceUri(uri);
      } catch (err) {
        code = (err as ServerfsError).code;
      }
      expect({ uri, code }).toEqual({ uri, code: "INVALID_ARGUMENT" });
    }
  });
});
