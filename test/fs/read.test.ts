// read_text_file and the resource: encodings, BOM, paging, byte budget, LINE_TOO_LARGE only for a
// returned line (docs/tools.md, `read_text_file`), revisions across pages, limits clamping.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectCode, single, write } from "./helpers.ts";

const BOM = "\ufeff";

describe("read_text_file", () => {
  test("ASCII, CJK, CRLF kept, empty file, directory → NOT_A_FILE, missing → PATH_NOT_FOUND", async () => {
    const { svc, root } = single();
    write(root, "a.txt", "hello\r\nworld");
    write(root, "cjk.txt", "日本語\n中文\n");
    write(root, "empty.txt", "");
    fs.mkdirSync(path.join(root, "dir"));
    const a = await svc.readTextFile({ workdir: "w", path: "a.txt" });
    expect(a).toMatchObject({ workdir: "w", path: "a.txt", start_line: 1, end_line: 2, content: "hello\r\nworld", bytes_returned: 12, has_more: false, next_start_line: null });
    const c = await svc.readTextFile({ workdir: "w", path: "cjk.txt" });
    expect(c.content).toBe("日本語\n中文\n");
    expect(c.bytes_returned).toBe(Buffer.byteLength("日本語\n中文\n"));
    const e = await svc.readTextFile({ workdir: "w", path: "empty.txt" });
    expect(e).toMatchObject({ content: "", end_line: 0, has_more: false, bytes_returned: 0 });
    await expectCode(svc.readTextFile({ workdir: "w", path: "dir" }), "NOT_A_FILE");
    await expectCode(svc.readTextFile({ workdir: "w", path: "nope.txt" }), "PATH_NOT_FOUND");
    await expectCode(svc.readTextFile({ workdir: "w", path: "a.txt/x" }), "NOT_A_DIRECTORY");
  });

  test("binary and encoding errors", async () => {
    const { svc, root } = single();
    write(root, "nul.txt", Buffer.from("abc\0def\n"));
    const late = Buffer.concat([Buffer.from("x".repeat(1100) + "\n"), Buffer.from([0]), Buffer.from("\n")]);
    write(root, "late-nul.txt", late);
    write(root, "utf16.txt", Buffer.from([0xff, 0xfe, 0x41, 0x00, 0x0a, 0x00].filter((b) => b !== 0)));
    write(root, "badline2.txt", Buffer.concat([Buffer.from("good\n"), Buffer.from([0xc3, 0x28, 0x0a])]));
    await expectCode(svc.readTextFile({ workdir: "w", path: "nul.txt" }), "BINARY_FILE");
    // a NUL after the 1 KiB sniff window is not BINARY_FILE; line 1 reads fine
    expect((await svc.readTextFile({ workdir: "w", path: "late-nul.txt", max_lines: 1 })).has_more).toBe(true);
    await expectCode(svc.readTextFile({ workdir: "w", path: "utf16.txt" }), "UNSUPPORTED_TEXT_ENCODING");
    // only the returned page is decoded
    expect((await svc.readTextFile({ workdir: "w", path: "badline2.txt", max_lines: 1 })).content).toBe("good\n");
    await expectCode(svc.readTextFile({ workdir: "w", path: "badline2.txt", start_line: 2 }), "UNSUPPORTED_TEXT_ENCODING");
  });

  test("BOM stripped on line 1 only; pages reassemble exactly", async () => {
    const { svc, root } = single();
    write(root, "bom.txt", `${BOM}first\nsecond\nthird\n`);
    const p1 = await svc.readTextFile({ workdir: "w", path: "bom.txt", max_lines: 1 });
    expect(p1.content).toBe("first\n");
    expect(p1.bytes_returned).toBe(6);
    const p2 = await svc.readTextFile({ workdir: "w", path: "bom.txt", start_line: 2 });
    expect(p2.content).toBe("second\nthird\n");
    expect(p1.content + p2.content).toBe("first\nsecond\nthird\n");
    expect(p2.revision).toBe(p1.revision);
  });

  test("100-line paging: end_line, next_start_line, EOF, start past EOF, max_lines clamp", async () => {
    const { svc, root } = single({ max_read_lines: 30 });
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}\n`);
    write(root, "100.txt", lines.join(""));
    let start = 1;
    let all = "";
    let pages = 0;
    for (;;) {
      const r = await svc.readTextFile({ workdir: "w", path: "100.txt", start_line: start, max_lines: 1000 });
      pages++;
      expect(r.start_line).toBe(start);
      expect(r.end_line! - r.start_line! + 1).toBeLessThanOrEqual(30);
      expect(r.bytes_returned).toBe(Buffer.byteLength(r.content));
      all += r.content;
      if (!r.has_more) {
        expect(r.next_start_line).toBeNull();
        expect(r.end_line).toBe(100);
        break;
      }
      expect(r.next_start_line).toBe(r.end_line + 1);
      start = r.next_start_line as number;
    }
    expect(pages).toBe(4);
    expect(all).toBe(lines.join(""));
    const past = await svc.readTextFile({ workdir: "w", path: "100.txt", start_line: 150 });
    expect(past).toMatchObject({ content: "", start_line: 150, end_line: 149, has_more: false, next_start_line: null });
    const d = await svc.readTextFile({ workdir: "w", path: "100.txt" });
    expect(d.end_line).toBe(30); // default 200 clamped to the workdir's 30
    await expectCode(svc.readTextFile({ workdir: "w", path: "100.txt", start_line: 0 }), "INVALID_ARGUMENT");
  });

  test("byte budget stops a page; LINE_TOO_LARGE only for a line that would be returned", async () => {
    const { svc, root } = single({ max_read_bytes: 20 });
    write(root, "b.txt", "aaaaaaaaa\nbbbbbbbbb\nccccccccc\n" + "X".repeat(40) + "\nshort\n");
    const p1 = await svc.readTextFile({ workdir: "w", path: "b.txt" });
    expect(p1).toMatchObject({ content: "aaaaaaaaa\nbbbbbbbbb\n", end_line: 2, has_more: true, next_start_line: 3, bytes_returned: 20 });
    // line 3 fits, the oversized line 4 ends the page instead of failing it
    const p2 = await svc.readTextFile({ workdir: "w", path: "b.txt", start_line: 3 });
    expect(p2).toMatchObject({ content: "ccccccccc\n", end_line: 3, has_more: true, next_start_line: 4 });
    await expectCode(svc.readTextFile({ workdir: "w", path: "b.txt", start_line: 4 }), "LINE_TOO_LARGE");
    expect((await svc.readTextFile({ workdir: "w", path: "b.txt", start_line: 5 })).content).toBe("short\n");
    // exactly at the budget is fine
    write(root, "exact.txt", "x".repeat(19) + "\n");
    expect((await svc.readTextFile({ workdir: "w", path: "exact.txt" })).bytes_returned).toBe(20);
  });

  test("a page ending exactly on max_lines reports has_more only when more bytes exist", async () => {
    const { svc, root } = single();
    write(root, "two.txt", "1\n2\n");
    write(root, "nonl.txt", "1\n2");
    expect((await svc.readTextFile({ workdir: "w", path: "two.txt", max_lines: 2 })).has_more).toBe(false);
    expect((await svc.readTextFile({ workdir: "w", path: "two.txt", max_lines: 1 })).has_more).toBe(true);
    expect((await svc.readTextFile({ workdir: "w", path: "nonl.txt", max_lines: 2 })).content).toBe("1\n2");
    expect((await svc.readTextFile({ workdir: "w", path: "nonl.txt", max_lines: 2 })).has_more).toBe(false);
  });

  test("a big file across many 64 KiB chunks pages correctly", async () => {
    const { svc, root } = single({ max_read_lines: 500 });
    const lines = Array.from({ length: 20_000 }, (_, i) => `${"#".repeat(i % 97)} ${i + 1}\n`);
    write(root, "big.txt", lines.join(""));
    const r = await svc.readTextFile({ workdir: "w", path: "big.txt", start_line: 12_345, max_lines: 500 });
    expect(r.content).toBe(lines.slice(12_344, 12_844).join(""));
    expect(r.end_line).toBe(12_844);
  });

  test("revision changes when content changes between pages", async () => {
    const { svc, root } = single();
    write(root, "c.txt", "1\n2\n3\n");
    const a = await svc.readTextFile({ workdir: "w", path: "c.txt", max_lines: 1 });
    fs.appendFileSync(path.join(root, "c.txt"), "4\n");
    const b = await svc.readTextFile({ workdir: "w", path: "c.txt", start_line: 2 });
    expect(b.revision).not.toBe(a.revision);
  });
});

describe("resource", () => {
  test("whole file or RESOURCE_TOO_LARGE", async () => {
    const { svc, root } = single();
    write(root, "ok.txt", "fine\n");
    write(root, "lines.txt", "x\n".repeat(2000));
    write(root, "bytes.txt", ("y".repeat(999) + "\n").repeat(600));
    expect(await svc.readResource({ workdir: "w", path: "ok.txt" })).toEqual({ text: "fine\n", mime_type: "text/plain" });
    await expectCode(svc.readResource({ workdir: "w", path: "lines.txt" }), "RESOURCE_TOO_LARGE");
    await expectCode(svc.readResource({ workdir: "w", path: "bytes.txt" }), "RESOURCE_TOO_LARGE");
    await expectCode(svc.readResource({ workdir: "w", path: "missing.txt" }), "PATH_NOT_FOUND");
  });
});

describe("list_directory and stat_file", () => {
  test("sorted by code point, paged, policy-filtered, limit clamped, RFC 3339 seconds", async () => {
    const { svc, root } = single({}, { default_list_limit: 7, max_list_entries: 10 });
    for (const n of ["b", "a", "Z", "\u{1F600}", "\uFF21", "c.txt", ".hidden"]) write(root, `d/${n}`, "x");
    for (let i = 0; i < 12; i++) write(root, `many/f${String(i).padStart(2, "0")}`, "x");
    const d = await svc.listDirectory({ workdir: "w", path: "d" });
    expect(d.entries.map((e) => e.name)).toEqual(["Z", "a", "b", "c.txt", "\uFF21", "\u{1F600}"]);
    expect(d.entries[0]).toMatchObject({ path: "d/Z", type: "file", size: 1 });
    expect(d.entries[0]?.modified_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const m = await svc.listDirectory({ workdir: "w", path: "many" });
    expect(m).toMatchObject({ limit: 7, returned: 7, has_more: true, offset: 0 });
    const m2 = await svc.listDirectory({ workdir: "w", path: "many", offset: 7, limit: 1000 });
    expect(m2).toMatchObject({ limit: 10, returned: 5, has_more: false });
    expect(m2.entries[0]?.name).toBe("f07");
    await expectCode(svc.listDirectory({ workdir: "w", path: "d/a" }), "NOT_A_DIRECTORY");
    await expectCode(svc.listDirectory({ workdir: "w", path: "nope" }), "PATH_NOT_FOUND");
    await expectCode(svc.listDirectory({ workdir: "w", offset: -1 }), "INVALID_ARGUMENT");
  });

  test("stat: file mime, directory, revision stability, chmod changes revision", async () => {
    const { svc, root } = single();
    write(root, "img.png", "x");
    write(root, "noext", "x");
    const png = await svc.statFile({ workdir: "w", path: "img.png" });
    expect(png).toMatchObject({ type: "file", size: 1, mime_type: "image/png" });
    expect((await svc.statFile({ workdir: "w", path: "noext" })).mime_type).toBe("application/octet-stream");
    const rootStat = await svc.statFile({ workdir: "w", path: "" });
    expect(rootStat).toMatchObject({ type: "directory", size: null, mime_type: null, path: "" });
    expect((await svc.statFile({ workdir: "w", path: "img.png" })).revision).toBe(png.revision);
    expect((await svc.readTextFile({ workdir: "w", path: "img.png" })).revision).toBe(png.revision);
    fs.chmodSync(path.join(root, "img.png"), 0o600);
    expect((await svc.statFile({ workdir: "w", path: "img.png" })).revision).not.toBe(png.revision);
    write(root, "twin.png", "x");
    expect((await svc.statFile({ workdir: "w", path: "twin.png" })).revision).not.toBe((await svc.statFile({ workdir: "w", path: "img.png" })).revision);
  });
});
