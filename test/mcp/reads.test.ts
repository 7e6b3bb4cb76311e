// read_multiple_files, read_media_file and read_text_file tail_lines through the real MCP
// surface: content blocks, structuredContent validated by the SDK client against the published
// outputSchema, coded errors, published limits and the audit line.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { png, wav } from "../support/media.ts";
import { type Harness, connect, errorCode, makeRegistry, ok, removeDir, tempDir } from "./helpers.ts";

let base: string;
let h: Harness;

beforeAll(async () => {
  base = tempDir();
  const root = path.join(base, "docs");
  fs.mkdirSync(path.join(root, "sub"), { recursive: true });
  fs.mkdirSync(path.join(base, "outside"));
  fs.writeFileSync(path.join(base, "outside", "secret.txt"), "OUTSIDE-MARKER\n");
  fs.writeFileSync(path.join(root, "a.txt"), "one\ntwo\nthree\n");
  fs.writeFileSync(path.join(root, "log.txt"), Array.from({ length: 1000 }, (_, i) => `entry ${i + 1}\r\n`).join(""));
  fs.writeFileSync(path.join(root, "shot.txt"), png());
  fs.writeFileSync(path.join(root, "sound"), wav());
  fs.writeFileSync(path.join(root, "notes.png"), "not a picture\n");
  fs.writeFileSync(path.join(root, ".env"), "TOKEN=ENV-MARKER\n");
  fs.symlinkSync(path.join(base, "outside"), path.join(root, "out"));
  fs.symlinkSync(path.join(base, "outside", "secret.txt"), path.join(root, "leaf.txt"));
  h = await connect(makeRegistry([{ alias: "docs", path: root }], { max_files_per_read: 4, max_media_bytes: 4096 }));
});
afterAll(async () => {
  await h.close();
  removeDir(base);
});

describe("read_media_file over MCP", () => {
  test("a PNG named .txt comes back as an image block whose bytes equal the file's", async () => {
    const res = await h.call("read_media_file", { workdir: "docs", path: "shot.txt" });
    const meta = ok<Record<string, unknown>>(res);
    expect(meta).toMatchObject({ workdir: "docs", path: "shot.txt", kind: "image", mime_type: "image/png", size: png().length });
    const block = res.content[0] as { type: string; data: string; mimeType: string };
    expect({ type: block.type, mimeType: block.mimeType }).toEqual({ type: "image", mimeType: "image/png" });
    expect(Buffer.compare(Buffer.from(block.data, "base64"), fs.readFileSync(path.join(base, "docs", "shot.txt")))).toBe(0);
    expect(res.content).toHaveLength(2); // the block, then the text mirror
  });

  test("WAV is an audio block; text named .png is UNSUPPORTED_MEDIA_TYPE; over max_media_bytes is MEDIA_FILE_TOO_LARGE", async () => {
    const res = await h.call("read_media_file", { workdir: "docs", path: "sound" });
    ok(res);
    const block = res.content[0] as { type: string; data: string; mimeType: string };
    expect({ type: block.type, mimeType: block.mimeType }).toEqual({ type: "audio", mimeType: "audio/wav" });
    expect(Buffer.from(block.data, "base64").equals(wav())).toBe(true);
    expect(errorCode(await h.call("read_media_file", { workdir: "docs", path: "notes.png" }))).toBe("UNSUPPORTED_MEDIA_TYPE");
    fs.writeFileSync(path.join(base, "docs", "big.png"), Buffer.concat([png(), Buffer.alloc(4096)]));
    expect(errorCode(await h.call("read_media_file", { workdir: "docs", path: "big.png" }))).toBe("MEDIA_FILE_TOO_LARGE");
  });
});

describe("read_multiple_files over MCP", () => {
  test("mixed paths validate against the outputSchema; each entry has its result or coded error", async () => {
    const out = ok<{ files: { path: string; result: { content: string } | null; error: { code: string; message: string } | null }[] }>(
      await h.call("read_multiple_files", { workdir: "docs", paths: ["a.txt", "../outside/secret.txt", "out/secret.txt", ".env"] }),
    );
    expect(out.files.map((f) => [f.path, f.error?.code ?? f.result?.content])).toEqual([
      ["a.txt", "one\ntwo\nthree\n"],
      ["../outside/secret.txt", "PATH_OUTSIDE_WORKDIR"],
      ["out/secret.txt", "SYMLINK_NOT_ALLOWED"],
      [".env", "HIDDEN_PATH_NOT_ALLOWED"],
    ]);
    const text = JSON.stringify(out);
    for (const leak of [base, "OUTSIDE-MARKER", "ENV-MARKER"]) expect(text).not.toContain(leak);
  });

  test("more than max_files_per_read paths, or none, is INVALID_ARGUMENT naming paths", async () => {
    const many = await h.call("read_multiple_files", { workdir: "docs", paths: ["a", "b", "c", "d", "e"] });
    expect(errorCode(many)).toBe("INVALID_ARGUMENT");
    expect((many.structuredContent as { message: string }).message).toContain("'paths'");
    expect(errorCode(await h.call("read_multiple_files", { workdir: "docs", paths: [] }))).toBe("INVALID_ARGUMENT");
  });

  test("the audit line counts paths and failures, and names none of them", async () => {
    await h.call("read_multiple_files", { workdir: "docs", paths: ["a.txt", "audit-probe-missing.txt"] });
    const line = h.logs.filter((l) => l.tool === "read_multiple_files").at(-1)!;
    expect(line).toMatchObject({ success: true, workdir: "docs", paths: 2, failed: 1, returned: 1 });
    expect(h.logText()).not.toContain("audit-probe-missing");
  });
});

describe("read_text_file tail_lines over MCP", () => {
  test("the last lines of a CRLF log, with null line numbers that the outputSchema admits", async () => {
    const out = ok<Record<string, unknown>>(await h.call("read_text_file", { workdir: "docs", path: "log.txt", tail_lines: 2 }));
    expect(out).toMatchObject({ content: "entry 999\r\nentry 1000\r\n", start_line: null, end_line: null, lines_returned: 2, has_earlier_lines: true, has_more: false });
  });

  test("tail_lines 0 and tail_lines with start_line or max_lines are INVALID_ARGUMENT; escapes keep their codes", async () => {
    expect(errorCode(await h.call("read_text_file", { workdir: "docs", path: "a.txt", tail_lines: 0 }))).toBe("INVALID_ARGUMENT");
    expect(errorCode(await h.call("read_text_file", { workdir: "docs", path: "a.txt", tail_lines: 1, start_line: 1 }))).toBe("INVALID_ARGUMENT");
    expect(errorCode(await h.call("read_text_file", { workdir: "docs", path: "a.txt", tail_lines: 1, max_lines: 200 }))).toBe("INVALID_ARGUMENT");
    expect(errorCode(await h.call("read_text_file", { workdir: "docs", path: "leaf.txt", tail_lines: 1 }))).toBe("SYMLINK_NOT_ALLOWED");
    expect(errorCode(await h.call("read_text_file", { workdir: "docs", path: "../outside/secret.txt", tail_lines: 1 }))).toBe("PATH_OUTSIDE_WORKDIR");
    // the page mode is unchanged by the now-optional start_line/max_lines
    expect(ok(await h.call("read_text_file", { workdir: "docs", path: "a.txt" }))).toMatchObject({ start_line: 1, end_line: 3, has_more: false });
  });

  test("published schemas: defaults and maxima of the new and changed parameters", async () => {
    const { tools } = await h.client.listTools();
    const props = (name: string) => (tools.find((t) => t.name === name)!.inputSchema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(props("read_text_file").start_line).toMatchObject({ default: 1, minimum: 1 });
    expect(props("read_text_file").max_lines).toMatchObject({ default: 200, maximum: 500 });
    expect(props("read_text_file").tail_lines).toMatchObject({ minimum: 1, maximum: 500 });
    expect(props("read_multiple_files").paths).toMatchObject({ minItems: 1, maxItems: 4 });
    for (const name of ["read_multiple_files", "read_media_file"]) {
      expect(tools.find((t) => t.name === name)!.annotations).toEqual({
        title: expect.any(String),
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
    }
  });
});

test("the server's instructions name the new read tools", () => {
  const text = h.client.getInstructions() ?? "";
  for (const name of ["tail_lines", "read_multiple_files", "read_media_file"]) expect(text).toContain(name);
});
