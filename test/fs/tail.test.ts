// read_text_file tail_lines: the last N lines read backwards from the end (docs/tools.md,
// `read_text_file`). What a line is matches the forward read exactly; the byte cap, BOM, binary
// sniff and UTF-8 rules are the same; only the returned bytes are decoded.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { TAIL_BLOCK, tailReadHooks, type TailTextOutput } from "../../src/fs/tail.ts";
import { expectCode, single, write } from "./helpers.ts";

const tailOf = (svc: ReturnType<typeof single>["svc"], p: string, n: number) =>
  svc.readTextFile({ workdir: "w", path: p, tail_lines: n }) as Promise<TailTextOutput>;

describe("read_text_file tail_lines", () => {
  test("a final newline ends the last line; without one the last line still counts; an empty last line is a line", async () => {
    const { svc, root } = single();
    write(root, "nl.txt", "a\nb\nc\n");
    write(root, "no-nl.txt", "a\nb\nc");
    write(root, "blank-end.txt", "a\nb\n\n");
    write(root, "only-nl.txt", "\n");
    expect(await tailOf(svc, "nl.txt", 2)).toMatchObject({ content: "b\nc\n", lines_returned: 2, has_earlier_lines: true, start_line: null, end_line: null, has_more: false, next_start_line: null, bytes_returned: 4 });
    expect(await tailOf(svc, "no-nl.txt", 2)).toMatchObject({ content: "b\nc", lines_returned: 2, has_earlier_lines: true });
    expect(await tailOf(svc, "nl.txt", 3)).toMatchObject({ content: "a\nb\nc\n", lines_returned: 3, has_earlier_lines: false, start_line: 1, end_line: 3 });
    expect(await tailOf(svc, "blank-end.txt", 1)).toMatchObject({ content: "\n", lines_returned: 1, has_earlier_lines: true });
    expect(await tailOf(svc, "blank-end.txt", 3)).toMatchObject({ content: "a\nb\n\n", start_line: 1, end_line: 3 });
    expect(await tailOf(svc, "only-nl.txt", 5)).toMatchObject({ content: "\n", lines_returned: 1, start_line: 1, end_line: 1 });
    // the forward read agrees on the line count
    expect((await svc.readTextFile({ workdir: "w", path: "blank-end.txt" })).end_line).toBe(3);
  });

  test("N larger than the file's line count returns the whole file; an empty file returns no lines", async () => {
    const { svc, root } = single();
    write(root, "three.txt", "1\n2\n3\n");
    write(root, "empty.txt", "");
    const whole = await tailOf(svc, "three.txt", 400);
    expect(whole).toMatchObject({ content: "1\n2\n3\n", lines_returned: 3, has_earlier_lines: false, start_line: 1, end_line: 3 });
    expect(whole.revision).toBe((await svc.statFile({ workdir: "w", path: "three.txt" })).revision);
    expect(await tailOf(svc, "empty.txt", 1)).toMatchObject({ content: "", lines_returned: 0, has_earlier_lines: false, start_line: 1, end_line: 0, bytes_returned: 0 });
  });

  test("CRLF is kept and splits at \\n; a BOM is hidden only when the tail reaches line 1", async () => {
    const { svc, root } = single();
    write(root, "crlf.txt", "x\r\ny\r\nz\r\n");
    write(root, "bom.txt", "\ufefffirst\nsecond\n");
    expect((await tailOf(svc, "crlf.txt", 2)).content).toBe("y\r\nz\r\n");
    expect((await tailOf(svc, "crlf.txt", 9)).content).toBe("x\r\ny\r\nz\r\n");
    expect(await tailOf(svc, "bom.txt", 1)).toMatchObject({ content: "second\n", has_earlier_lines: true });
    expect(await tailOf(svc, "bom.txt", 2)).toMatchObject({ content: "first\nsecond\n", bytes_returned: 13, start_line: 1 });
  });

  test("N = 0, a negative or fractional N, and tail_lines with start_line or max_lines are INVALID_ARGUMENT", async () => {
    const { svc, root } = single();
    write(root, "a.txt", "a\n");
    for (const n of [0, -1, 1.5]) await expectCode(tailOf(svc, "a.txt", n), "INVALID_ARGUMENT");
    await expectCode(svc.readTextFile({ workdir: "w", path: "a.txt", tail_lines: 1, start_line: 1 }), "INVALID_ARGUMENT");
    const e = await expectCode(svc.readTextFile({ workdir: "w", path: "a.txt", tail_lines: 1, max_lines: 5 }), "INVALID_ARGUMENT");
    expect(e.message).toContain("tail_lines cannot be combined");
  });

  test("a file several blocks long, multi-byte characters across every block boundary: each tail equals the split text", async () => {
    const { svc, root } = single({ max_read_lines: 100_000, max_read_bytes: 4 * 1024 * 1024 });
    // 3-byte and 4-byte characters, lines of varying length: block boundaries land inside characters
    const lines = Array.from({ length: 30_000 }, (_, i) => `${i} ${"€".repeat(i % 7)}${"😀".repeat(i % 3)}\n`);
    const text = lines.join("");
    expect(Buffer.byteLength(text)).toBeGreaterThan(5 * TAIL_BLOCK);
    write(root, "big.txt", text);
    for (const n of [1, 2, 100, 3_000, 9_999, 29_999, 30_000, 31_000]) {
      const r = await tailOf(svc, "big.txt", n);
      const want = lines.slice(-n).join("");
      expect({ n, ok: r.content === want, lines: r.lines_returned, earlier: r.has_earlier_lines }).toEqual({
        n,
        ok: true,
        lines: Math.min(n, lines.length),
        earlier: n < lines.length,
      });
      expect(r.bytes_returned).toBe(Buffer.byteLength(want));
    }
  });

  test("invalid UTF-8 before the cut is never decoded; inside the returned lines it is UNSUPPORTED_TEXT_ENCODING", async () => {
    const { svc, root } = single();
    // a lone continuation byte and a truncated 3-byte sequence, then good lines
    write(root, "mixed.txt", Buffer.concat([Buffer.from([0x80, 0x0a, 0xe2, 0x82, 0x0a]), Buffer.from("good\nfine\n")]));
    expect((await tailOf(svc, "mixed.txt", 2)).content).toBe("good\nfine\n");
    await expectCode(tailOf(svc, "mixed.txt", 3), "UNSUPPORTED_TEXT_ENCODING");
    await expectCode(tailOf(svc, "mixed.txt", 4), "UNSUPPORTED_TEXT_ENCODING");
    // a character cut by a block boundary is reassembled, not refused
    const pad = "a".repeat(TAIL_BLOCK - 2);
    write(root, "straddle.txt", `x\n€${pad}\n`);
    expect((await tailOf(svc, "straddle.txt", 1)).content).toBe(`€${pad}\n`);
  });

  test("byte cap: a last line over max_read_bytes is LINE_TOO_LARGE; one exactly at the cap is returned; the cap cuts a tail short", async () => {
    const { svc, root } = single({ max_read_bytes: 100 });
    write(root, "huge-last.txt", `short\n${"x".repeat(200)}`);
    write(root, "huge-only.txt", `${"y".repeat(5000)}\n`);
    write(root, "at-cap.txt", `z\n${"x".repeat(99)}\n`);
    write(root, "over-cap.txt", `z\n${"x".repeat(100)}\n`);
    write(root, "cut.txt", `${"x".repeat(200)}\n${"a".repeat(40)}\n${"b".repeat(40)}\n`);
    write(root, "bom-at-cap.txt", `\ufeff${"c".repeat(99)}\n`);
    await expectCode(tailOf(svc, "huge-last.txt", 1), "LINE_TOO_LARGE");
    await expectCode(tailOf(svc, "huge-only.txt", 3), "LINE_TOO_LARGE");
    expect(await tailOf(svc, "at-cap.txt", 1)).toMatchObject({ bytes_returned: 100, has_earlier_lines: true });
    await expectCode(tailOf(svc, "over-cap.txt", 1), "LINE_TOO_LARGE");
    // 3 asked, 2 fit in 100 bytes (82), the third (201 bytes) does not: 2 lines, earlier lines exist
    expect(await tailOf(svc, "cut.txt", 3)).toMatchObject({ content: `${"a".repeat(40)}\n${"b".repeat(40)}\n`, lines_returned: 2, has_earlier_lines: true });
    expect(await tailOf(svc, "bom-at-cap.txt", 1)).toMatchObject({ bytes_returned: 100, start_line: 1, has_earlier_lines: false });
  });

  test("N above the workdir's max_read_lines is clamped to it", async () => {
    const { svc, root } = single({ max_read_lines: 30 });
    write(root, "100.txt", Array.from({ length: 100 }, (_, i) => `${i + 1}\n`).join(""));
    const r = await tailOf(svc, "100.txt", 1_000_000);
    expect(r).toMatchObject({ lines_returned: 30, has_earlier_lines: true });
    expect(r.content.startsWith("71\n")).toBe(true);
  });

  test("binary sniff as the forward read: a NUL in the first 1 KiB is BINARY_FILE even if the tail is clean", async () => {
    const { svc, root } = single();
    write(root, "nul.txt", Buffer.concat([Buffer.from("a\0b\n"), Buffer.from("clean\n".repeat(500))]));
    await expectCode(tailOf(svc, "nul.txt", 1), "BINARY_FILE");
  });

  test("only the end is read: the last line of a 16 GiB sparse file comes back without reading the rest", async () => {
    const { svc, root } = single();
    const p = path.join(root, "sparse.log");
    const fd = fs.openSync(p, "w");
    try {
      fs.writeSync(fd, "head line\n".repeat(200)); // the 1 KiB binary sniff sees text, not the hole
      const tailText = Buffer.from("\nsecond to last\nthe last line\n");
      fs.writeSync(fd, tailText, 0, tailText.length, 16 * 1024 ** 3);
    } finally {
      fs.closeSync(fd);
    }
    const r = await tailOf(svc, "sparse.log", 2);
    expect(r).toMatchObject({ content: "second to last\nthe last line\n", lines_returned: 2, has_earlier_lines: true, start_line: null });
  });
});

describe("tail_lines while the file changes", () => {
  afterEach(() => {
    tailReadHooks.afterBlock = null;
  });

  test("a line appended, or the file cut short, during the backward read is FILE_CHANGED_DURING_READ", async () => {
    const { svc, root } = single({ max_read_lines: 100_000, max_read_bytes: 4 * 1024 * 1024 });
    const p = path.join(root, "live.log");
    const text = Array.from({ length: 30_000 }, (_, i) => `line ${i}\n`).join("");
    fs.writeFileSync(p, text);
    tailReadHooks.afterBlock = () => {
      tailReadHooks.afterBlock = null;
      fs.appendFileSync(p, "appended meanwhile\n");
    };
    await expectCode(tailOf(svc, "live.log", 25_000), "FILE_CHANGED_DURING_READ");
    fs.writeFileSync(p, text);
    tailReadHooks.afterBlock = () => {
      tailReadHooks.afterBlock = null;
      fs.truncateSync(p, 1000);
    };
    await expectCode(tailOf(svc, "live.log", 25_000), "FILE_CHANGED_DURING_READ");
    // left alone, the same file reads fine
    fs.writeFileSync(p, text);
    expect((await tailOf(svc, "live.log", 3)).content).toBe("line 29997\nline 29998\nline 29999\n");
  });
});
