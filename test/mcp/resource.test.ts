// The resource template serverfs://{workdir}/{path}: listing, whole-file reads, percent-decoding,
// RESOURCE_TOO_LARGE and the `CODE: detail` error form.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { type Harness, connect, makeRegistry, removeDir, tempDir } from "./helpers.ts";

let base: string;
let h: Harness;

beforeAll(async () => {
  base = tempDir();
  fs.mkdirSync(path.join(base, "notes", "a dir"), { recursive: true });
  fs.writeFileSync(path.join(base, "notes", "a dir", "to do.md"), "\ufeffbuy milk\r\ncall bob\n");
  fs.writeFileSync(path.join(base, "notes", "big.txt"), "x\n".repeat(30));
  fs.writeFileSync(path.join(base, "notes", "fits.txt"), "x\n".repeat(20));
  fs.writeFileSync(path.join(base, "notes", ".env"), "TOKEN=1\n");
  h = await connect(makeRegistry([{ alias: "notes", path: path.join(base, "notes"), max_read_lines: 20 }]));
});
afterAll(async () => {
  await h.close();
  removeDir(base);
});

async function readError(uri: string): Promise<McpError> {
  const err = await h.client.readResource({ uri }).catch((e: unknown) => e);
  if (!(err instanceof McpError)) throw new Error(`expected an MCP error for ${uri}`);
  return err;
}

describe("resource template", () => {
  test("the template is listed as text/plain", async () => {
    const { resourceTemplates } = await h.client.listResourceTemplates();
    expect(resourceTemplates).toHaveLength(1);
    expect(resourceTemplates[0]).toMatchObject({ uriTemplate: "serverfs://{workdir}/{path}", mimeType: "text/plain" });
  });

  test("a read returns the whole text (BOM hidden, CRLF kept) for a percent-encoded path", async () => {
    const uri = "serverfs://notes/a%20dir/to%20do.md";
    const res = await h.client.readResource({ uri });
    expect(res.contents).toHaveLength(1);
    expect(res.contents[0]).toMatchObject({ uri, text: "buy milk\r\ncall bob\n" });
  });

  test("exactly the workdir maximum of lines is served; one more is RESOURCE_TOO_LARGE", async () => {
    const fits = await h.client.readResource({ uri: "serverfs://notes/fits.txt" });
    expect((fits.contents[0] as { text: string }).text).toBe("x\n".repeat(20));
    const err = await readError("serverfs://notes/big.txt");
    expect(err.message).toContain("RESOURCE_TOO_LARGE: ");
    expect(err.data).toEqual({ code: "RESOURCE_TOO_LARGE" });
  });

  test("policy and lookup failures use the same codes as the tools", async () => {
    expect((await readError("serverfs://notes/.env")).data).toEqual({ code: "HIDDEN_PATH_NOT_ALLOWED" });
    expect((await readError("serverfs://notes/../x")).data).toEqual({ code: "PATH_OUTSIDE_WORKDIR" });
    expect((await readError("serverfs://nope/x.txt")).data).toEqual({ code: "WORKDIR_NOT_FOUND" });
    expect((await readError("serverfs://notes/missing.txt")).data).toEqual({ code: "PATH_NOT_FOUND" });
    expect((await readError("serverfs://notes/a%ZZ")).data).toEqual({ code: "INVALID_ARGUMENT" });
    expect((await readError("file:///etc/passwd")).data).toEqual({ code: "INVALID_ARGUMENT" });
    const msg = (await readError("serverfs://notes/missing.txt")).message;
    expect(msg).not.toContain(base);
  });

  test("each resource read writes one audit line without the path", async () => {
    const before = h.logs.filter((l) => l.event === "resource_read").length;
    await h.client.readResource({ uri: "serverfs://notes/fits.txt" });
    const lines = h.logs.filter((l) => l.event === "resource_read");
    expect(lines.length).toBe(before + 1);
    expect(lines.at(-1)).toMatchObject({ workdir: "notes", success: true, bytes_returned: 40 });
    expect(JSON.stringify(lines.at(-1))).not.toContain("fits.txt");
  });
});
