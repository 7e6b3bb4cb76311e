// read_multiple_files, read_media_file and read_text_file tail_lines on the Windows file backend:
// an MCP client speaking to the compiled dist/serverfs-windows-x64.exe over stdio, with real files.
// Runs on Windows and in the Windows lane under Wine (scripts/windows-lane/run.sh); skips
// elsewhere because the executable and its ntdll calls exist only on Windows. Build it first:
// `./node_modules/.bin/bun build/compile.ts windows-x64`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { errorCode, ok } from "../mcp/helpers.ts";
import { png, wav } from "../support/media.ts";
import { WINE_LINKS_FIXTURE, removeTree, connectWindowsServe, callTool } from "../support/windows-serve.ts";

const onWindows = process.platform === "win32";
const underWine = onWindows && (await import("../../platform/fs/windows.ts")).underWine();
const LOG_LINES = Array.from({ length: 20_000 }, (_, i) => `event ${i + 1} ${"é".repeat(i % 5)}\r\n`);

let base = "";
let client: Client;


const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> => callTool(client, name, args);

type Many = { files: { path: string; result: { content: string; has_more: boolean } | null; error: { code: string; message: string } | null }[]; bytes_returned: number };
const entries = (m: Many) => m.files.map((f) => [f.path, f.error?.code ?? "OK"]);

describe.skipIf(!onWindows)("new read tools on serverfs-windows-x64.exe (needs Windows or the Wine lane)", () => {
  beforeAll(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-winreads-")));
    const ro = path.join(base, "ro");
    fs.mkdirSync(path.join(ro, "sub"), { recursive: true });
    fs.writeFileSync(path.join(ro, "a.txt"), "first\r\nsecond\r\nthird\r\n");
    fs.writeFileSync(path.join(ro, "log.txt"), LOG_LINES.join(""));
    fs.writeFileSync(path.join(ro, "sub", "deep.md"), "deep\n");
    fs.writeFileSync(path.join(ro, "shot.txt"), png());
    fs.writeFileSync(path.join(ro, "tune.dat"), wav());
    fs.writeFileSync(path.join(ro, "fake.png"), "plain text\r\n");
    fs.writeFileSync(path.join(ro, "id_rsa"), png());
    fs.writeFileSync(path.join(ro, ".env"), "TOKEN=ENV-MARKER\n");
    const small = path.join(base, "small");
    fs.mkdirSync(small);
    fs.writeFileSync(path.join(small, "one.txt"), "0123456789abcdefghi\n".repeat(2)); // 40 bytes
    fs.writeFileSync(path.join(small, "two.txt"), "0123456789abcdefghi\n".repeat(2));
    fs.writeFileSync(path.join(small, "three.txt"), "three\n");
    fs.writeFileSync(path.join(small, "four.txt"), "4\n");
    fs.mkdirSync(path.join(base, "outside"));
    fs.writeFileSync(path.join(base, "outside", "x.txt"), "OUTSIDE-MARKER\n");
    const config = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      config,
      [
        "[limits]",
        "max_files_per_read = 8",
        "max_media_bytes = 4096",
        "[[workdirs]]",
        'alias = "ro"',
        `path = ${JSON.stringify(ro)}`,
        "[[workdirs]]",
        'alias = "small"',
        `path = ${JSON.stringify(small)}`,
        "max_read_bytes = 64",
        "",
      ].join("\n"),
    );
    client = await connectWindowsServe("windows-reads-test", ["--config", config], base, base);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    if (base !== "") removeTree(base);
  });

  test("read_media_file: PNG named .txt is image/png with the file's exact bytes; WAV is audio; text named .png refused", async () => {
    const res = await call("read_media_file", { workdir: "ro", path: "shot.txt" });
    expect(ok(res)).toMatchObject({ kind: "image", mime_type: "image/png", size: png().length });
    const block = res.content[0] as { type: string; data: string; mimeType: string };
    expect(block.type).toBe("image");
    expect(Buffer.from(block.data, "base64").equals(fs.readFileSync(path.join(base, "ro", "shot.txt")))).toBe(true);
    const audio = await call("read_media_file", { workdir: "ro", path: "tune.dat" });
    expect((audio.content[0] as { type: string; mimeType: string }).mimeType).toBe("audio/wav");
    expect(errorCode(await call("read_media_file", { workdir: "ro", path: "fake.png" }))).toBe("UNSUPPORTED_MEDIA_TYPE");
    fs.writeFileSync(path.join(base, "ro", "big.png"), Buffer.concat([png(), Buffer.alloc(4096)]));
    expect(errorCode(await call("read_media_file", { workdir: "ro", path: "big.png" }))).toBe("MEDIA_FILE_TOO_LARGE");
  });

  test("escape classes with Windows spellings on all three tools", async () => {
    const cases: [string, string][] = [
      ["..\\outside\\x.txt", "PATH_OUTSIDE_WORKDIR"],
      ["sub\\..\\..\\outside\\x.txt", "PATH_OUTSIDE_WORKDIR"],
      [path.join(base, "outside", "x.txt"), "PATH_OUTSIDE_WORKDIR"], // absolute drive path
      ["C:\\Windows\\win.ini", "PATH_OUTSIDE_WORKDIR"],
      ["\\\\?\\C:\\Windows\\win.ini", "PATH_OUTSIDE_WORKDIR"],
      ["id_rsa", "DENIED_PATH"],
      ["ID_RSA", "DENIED_PATH"], // the policy folds case as NTFS does
      [".env", "HIDDEN_PATH_NOT_ALLOWED"],
    ];
    for (const [p, code] of cases) {
      expect({ p, media: errorCode(await call("read_media_file", { workdir: "ro", path: p })) }).toEqual({ p, media: code });
      expect({ p, tail: errorCode(await call("read_text_file", { workdir: "ro", path: p, tail_lines: 1 })) }).toEqual({ p, tail: code });
    }
    const many = ok<Many>(await call("read_multiple_files", { workdir: "ro", paths: cases.map(([p]) => p) }));
    expect(entries(many)).toEqual(cases);
    expect(JSON.stringify(many)).not.toContain("OUTSIDE-MARKER");
    expect(JSON.stringify(many)).not.toContain("ENV-MARKER");
  });

  test("read_multiple_files: backslash and slash spellings are one path; the byte budget cuts exactly; too many paths refused", async () => {
    const mixed = ok<Many>(await call("read_multiple_files", { workdir: "ro", paths: ["sub\\deep.md", "sub/deep.md", "a.txt", "missing.txt"] }));
    expect(entries(mixed)).toEqual([
      ["sub\\deep.md", "OK"],
      ["sub/deep.md", "DUPLICATE_PATH"],
      ["a.txt", "OK"],
      ["missing.txt", "PATH_NOT_FOUND"],
    ]);
    expect(mixed.files[2]!.result!.content).toBe("first\r\nsecond\r\nthird\r\n");
    // budget 64: one.txt takes 40, two.txt gets one 20-byte line (4 left), three.txt's first line
    // (6 bytes) does not fit, and four.txt (2 bytes) comes after the cut
    const cut = ok<Many>(await call("read_multiple_files", { workdir: "small", paths: ["one.txt", "two.txt", "three.txt", "four.txt"] }));
    expect(entries(cut)).toEqual([
      ["one.txt", "OK"],
      ["two.txt", "OK"],
      ["three.txt", "READ_BUDGET_EXCEEDED"],
      ["four.txt", "READ_BUDGET_EXCEEDED"],
    ]);
    expect(cut.files[1]!.result).toMatchObject({ content: "0123456789abcdefghi\n", has_more: true });
    expect(cut.bytes_returned).toBe(60);
    expect(errorCode(await call("read_multiple_files", { workdir: "ro", paths: Array.from({ length: 9 }, (_, i) => `f${i}`) }))).toBe("INVALID_ARGUMENT");
  });

  test("read_text_file tail_lines: the end of a multi-block CRLF log through the held handle; conflicts refused", async () => {
    for (const n of [1, 3, 500]) {
      const out = ok<{ content: string; lines_returned: number; has_earlier_lines: boolean }>(await call("read_text_file", { workdir: "ro", path: "log.txt", tail_lines: n }));
      expect({ n, same: out.content === LOG_LINES.slice(-n).join(""), lines: out.lines_returned, earlier: out.has_earlier_lines }).toEqual({ n, same: true, lines: n, earlier: true });
    }
    expect(ok(await call("read_text_file", { workdir: "ro", path: "a.txt", tail_lines: 10 }))).toMatchObject({ content: "first\r\nsecond\r\nthird\r\n", start_line: 1, end_line: 3 });
    expect(errorCode(await call("read_text_file", { workdir: "ro", path: "a.txt", tail_lines: 1, start_line: 2 }))).toBe("INVALID_ARGUMENT");
  });

  // Unix symlinks committed to the repository (test/platform/fixtures/wine-links), seen through
  // Wine: a Windows checkout turns them into plain files, so this runs under Wine only.
  test.skipIf(!underWine)("symlinked leaf and parent are SYMLINK_NOT_ALLOWED on the three tools (Wine lane)", async () => {
    const fixture = WINE_LINKS_FIXTURE;
    const links = await connectWindowsServe("windows-reads-links", ["--workdir", `l=${fixture}`], base);
    const ask = async (name: string, args: Record<string, unknown>) => (await links.callTool({ name, arguments: { workdir: "l", ...args } })) as CallToolResult;
    try {
      for (const p of ["file-link.txt", "dir-link\\b.txt", "out-link/tools.md"]) {
        expect({ p, code: errorCode(await ask("read_media_file", { path: p })) }).toEqual({ p, code: "SYMLINK_NOT_ALLOWED" });
        expect({ p, code: errorCode(await ask("read_text_file", { path: p, tail_lines: 2 })) }).toEqual({ p, code: "SYMLINK_NOT_ALLOWED" });
      }
      const many = ok<Many>(await ask("read_multiple_files", { paths: ["sub/b.txt", "file-link.txt", "dir-link/b.txt", "out-link/tools.md"] }));
      expect(entries(many)).toEqual([
        ["sub/b.txt", "OK"],
        ["file-link.txt", "SYMLINK_NOT_ALLOWED"],
        ["dir-link/b.txt", "SYMLINK_NOT_ALLOWED"],
        ["out-link/tools.md", "SYMLINK_NOT_ALLOWED"],
      ]);
    } finally {
      await links.close();
    }
  });
});
