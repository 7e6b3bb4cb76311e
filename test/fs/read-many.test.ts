// read_multiple_files in the file layer: each path its own result or coded error, one byte
// budget for the whole call with an exact cut, the path-count bound, duplicates, cancellation
// (docs/tools.md, `read_multiple_files`).
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { ReadManyOutput } from "../../src/fs/index.ts";
import { expectCode, single, write } from "./helpers.ts";

const codes = (out: ReadManyOutput) => out.files.map((f) => [f.path, f.error?.code ?? "OK"]);

describe("read_multiple_files", () => {
  test("mixed good and bad paths: each its own result or coded error, in request order", async () => {
    const { svc, root, base } = single();
    write(root, "a.txt", "alpha\n");
    write(root, "sub/b.md", "beta\nbeta 2\n");
    write(root, ".env", "TOKEN=1\n");
    write(root, "bin.dat", Buffer.from("x\0y"));
    fs.mkdirSync(path.join(root, "dir"));
    const paths = ["a.txt", "missing.txt", "../outside.txt", ".env", "dir", "bin.dat", "sub/b.md", path.join(root, "a.txt"), "a.txt/", "sub/b.md/x"];
    const out = await svc.readMultipleFiles({ workdir: "w", paths });
    expect(codes(out)).toEqual([
      ["a.txt", "OK"],
      ["missing.txt", "PATH_NOT_FOUND"],
      ["../outside.txt", "PATH_OUTSIDE_WORKDIR"],
      [".env", "HIDDEN_PATH_NOT_ALLOWED"],
      ["dir", "NOT_A_FILE"],
      ["bin.dat", "BINARY_FILE"],
      ["sub/b.md", "OK"],
      [path.join(root, "a.txt"), "PATH_OUTSIDE_WORKDIR"],
      ["a.txt/", "INVALID_PATH"],
      ["sub/b.md/x", "NOT_A_DIRECTORY"],
    ]);
    // a result is exactly what read_text_file answers for the same file
    expect(out.files[0]!.result as unknown).toEqual(await svc.readTextFile({ workdir: "w", path: "a.txt" }));
    expect(out.files[6]!.result).toMatchObject({ path: "sub/b.md", content: "beta\nbeta 2\n", start_line: 1, end_line: 2, has_more: false });
    expect(out).toMatchObject({ workdir: "w", returned: 2, bytes_returned: 6 + 12, budget_bytes: 524_288 });
    // errors name the caller's path, never a host path it did not send
    for (const f of out.files) if (f.error && f.path !== paths[7]) expect(f.error.message).not.toContain(base);
    expect(out.files[1]!.error!.message).toBe("w:missing.txt — does not exist");
    for (const f of out.files) expect(f.result === null).toBe(f.error !== null);
  });

  test("one byte budget (max_read_bytes) for the whole call: a page cut short, then READ_BUDGET_EXCEEDED for the rest", async () => {
    const { svc, root } = single({ max_read_bytes: 100 });
    write(root, "a.txt", "0123456789".repeat(4).replace(/(.{9})./g, "$1\n")); // 4 lines, 40 bytes
    write(root, "b.txt", "abcdefghi\n".repeat(10)); // 10 lines, 100 bytes
    write(root, "c.txt", "");
    write(root, "d.txt", "d\n");
    const out = await svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "b.txt", "c.txt", "missing.txt", ".env", "d.txt"] });
    expect(codes(out)).toEqual([
      ["a.txt", "OK"],
      ["b.txt", "OK"],
      ["c.txt", "READ_BUDGET_EXCEEDED"],
      ["missing.txt", "READ_BUDGET_EXCEEDED"],
      [".env", "HIDDEN_PATH_NOT_ALLOWED"],
      ["d.txt", "READ_BUDGET_EXCEEDED"],
    ]);
    expect(out.files[0]!.result).toMatchObject({ bytes_returned: 40, has_more: false });
    // b gets what is left (60 bytes = 6 lines) and says where to continue
    expect(out.files[1]!.result).toMatchObject({ bytes_returned: 60, end_line: 6, has_more: true, next_start_line: 7 });
    expect(out).toMatchObject({ returned: 2, bytes_returned: 100, budget_bytes: 100 });
  });

  test("a first line that does not fit what is left ends the call's reading; alone it is the usual LINE_TOO_LARGE", async () => {
    const { svc, root } = single({ max_read_bytes: 100 });
    write(root, "a.txt", "x".repeat(89) + "\n"); // 90 bytes: 10 left
    write(root, "wide.txt", "y".repeat(14) + "\n"); // first line 15 > 10
    write(root, "small.txt", "s\n"); // would fit, but comes after the cut
    write(root, "huge.txt", "z".repeat(300) + "\n");
    const out = await svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "wide.txt", "small.txt"] });
    expect(codes(out)).toEqual([
      ["a.txt", "OK"],
      ["wide.txt", "READ_BUDGET_EXCEEDED"],
      ["small.txt", "READ_BUDGET_EXCEEDED"],
    ]);
    const first = await svc.readMultipleFiles({ workdir: "w", paths: ["huge.txt", "small.txt"] });
    expect(codes(first)).toEqual([
      ["huge.txt", "LINE_TOO_LARGE"],
      ["small.txt", "OK"],
    ]);
  });

  test("max_lines applies to each file and is clamped to the workdir's max_read_lines", async () => {
    const { svc, root } = single({ max_read_lines: 3 });
    write(root, "a.txt", "1\n2\n3\n4\n5\n");
    write(root, "b.txt", "x\ny\n");
    const out = await svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "b.txt"], max_lines: 2 });
    expect(out.files.map((f) => f.result?.content)).toEqual(["1\n2\n", "x\ny\n"]);
    const clamped = await svc.readMultipleFiles({ workdir: "w", paths: ["a.txt"], max_lines: 1000 });
    expect(clamped.files[0]!.result).toMatchObject({ content: "1\n2\n3\n", has_more: true, next_start_line: 4 });
    await expectCode(svc.readMultipleFiles({ workdir: "w", paths: ["a.txt"], max_lines: 0 }), "INVALID_ARGUMENT");
  });

  test("path count: 1 to max_files_per_read; more, or none, is INVALID_ARGUMENT for the whole call", async () => {
    const { svc, root } = single({}, { max_files_per_read: 3 });
    write(root, "a.txt", "a\n");
    expect((await svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "b", "c"] })).files.length).toBe(3);
    const e = await expectCode(svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "b", "c", "d"] }), "INVALID_ARGUMENT");
    expect(e.message).toContain("1 to 3 paths");
    await expectCode(svc.readMultipleFiles({ workdir: "w", paths: [] }), "INVALID_ARGUMENT");
    await expectCode(svc.readMultipleFiles({ workdir: "nope", paths: ["a.txt"] }), "WORKDIR_NOT_FOUND");
  });

  test("a repeated path (after normalisation) is answered once: later copies are DUPLICATE_PATH and cost no budget", async () => {
    const { svc, root } = single({ max_read_bytes: 10 });
    write(root, "a.txt", "12345678\n"); // 9 bytes
    write(root, "sub/b.txt", "b\n");
    const out = await svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "./a.txt", "sub/../a.txt", "x/missing", "x//missing", "sub/b.txt"] });
    expect(codes(out)).toEqual([
      ["a.txt", "OK"],
      ["./a.txt", "DUPLICATE_PATH"],
      ["sub/../a.txt", "DUPLICATE_PATH"],
      ["x/missing", "PATH_NOT_FOUND"],
      ["x//missing", "DUPLICATE_PATH"],
      ["sub/b.txt", "READ_BUDGET_EXCEEDED"], // 1 byte left, its first line is 2
    ]);
    expect(out.files[1]!.error!.message).toContain("paths[0]");
    expect(out.bytes_returned).toBe(9);
  });

  test("a cancelled call ends with READ_FAILED and no partial answer", async () => {
    const { svc, root } = single();
    write(root, "a.txt", "a\n");
    const ac = new AbortController();
    ac.abort();
    await expectCode(svc.readMultipleFiles({ workdir: "w", paths: ["a.txt", "a.txt"] }, ac.signal), "READ_FAILED");
  });
});
