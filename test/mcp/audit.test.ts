// Audit hygiene: exactly one tool_call line per call, with counts and codes only. A marker
// placed in file content, paths, queries, globs, edit texts and base64 payloads must never
// reach the log, and neither may a host path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { type Harness, connect, makeRegistry, ok, removeDir, tempDir } from "./helpers.ts";

const MARK = "SECRETMARK7f3a";
let base: string;
let h: Harness;

beforeAll(async () => {
  base = tempDir();
  const rw = path.join(base, "rw");
  fs.mkdirSync(path.join(rw, `dir-${MARK}`), { recursive: true });
  fs.writeFileSync(path.join(rw, `dir-${MARK}`, `file-${MARK}.txt`), `content ${MARK} here\n`);
  h = await connect(makeRegistry([{ alias: "rw", path: rw, read_only: false, binary_transfer_enabled: true }]));
});
afterAll(async () => {
  await h.close();
  removeDir(base);
});

const toolLines = () => h.logs.filter((l) => l.event === "tool_call");

describe("audit log", () => {
  test("every kind of call, successful or not, writes exactly one line without marker or host path", async () => {
    const p = `dir-${MARK}/file-${MARK}.txt`;
    const read = ok<{ revision: string }>(await h.call("read_text_file", { workdir: "rw", path: p }));
    const calls: Array<[string, Record<string, unknown>]> = [
      ["list_directory", { workdir: "rw", path: `dir-${MARK}` }],
      ["find_files", { workdir: "rw", pattern: `*${MARK}*` }],
      ["search_text", { workdir: "rw", query: MARK, glob: `*${MARK}*` }],
      ["search_text", { workdir: "rw", query: MARK, path: `missing-${MARK}` }],
      ["stat_file", { workdir: "rw", path: p }],
      ["create_text_file", { workdir: "rw", path: `new-${MARK}.txt`, content: `body ${MARK}` }],
      ["edit_text_file", { workdir: "rw", path: p, expected_revision: read.revision, edits: [{ old_text: MARK, new_text: `${MARK}2` }] }],
      ["edit_text_file", { workdir: "rw", path: p, expected_revision: read.revision, edits: [{ old_text: MARK, new_text: "x" }] }],
      ["upload_binary_file", { workdir: "rw", path: `up-${MARK}.bin`, data_base64: Buffer.from(MARK).toString("base64") }],
      ["upload_binary_file", { workdir: "rw", path: "bad.bin", data_base64: `${MARK}*` }],
      ["download_binary_file", { workdir: "rw", path: `up-${MARK}.bin` }],
      ["read_text_file", { workdir: MARK, path: p }],
      ["read_text_file", { workdir: "rw", path: `../${MARK}` }],
      ["list_directory", { workdir: "rw", limit: MARK }],
    ];
    const before = toolLines().length;
    for (const [tool, args] of calls) await h.call(tool, args);
    const lines = toolLines().slice(before);
    expect(lines.map((l) => l.tool)).toEqual(calls.map(([tool]) => tool));
    const text = h.logText();
    expect(text).not.toContain(MARK);
    expect(text).not.toContain(Buffer.from(MARK).toString("base64"));
    expect(text).not.toContain(base);
  });

  test("success lines carry counts; failure lines carry the error code", async () => {
    await h.call("list_directory", { workdir: "rw" });
    expect(toolLines().at(-1)).toMatchObject({ tool: "list_directory", workdir: "rw", success: true, returned: 3, has_more: false });
    expect(typeof toolLines().at(-1)!.duration_ms).toBe("number");

    await h.call("stat_file", { workdir: "rw", path: "nope" });
    expect(toolLines().at(-1)).toMatchObject({ tool: "stat_file", workdir: "rw", success: false, error_code: "PATH_NOT_FOUND" });

    await h.call("stat_file", { workdir: "unknown-alias", path: "" });
    const unknown = toolLines().at(-1)!;
    expect(unknown).toMatchObject({ success: false, error_code: "WORKDIR_NOT_FOUND" });
    expect("workdir" in unknown).toBe(false);

    const created = ok<{ revision: string }>(await h.call("create_text_file", { workdir: "rw", path: "e.txt", content: "a b" }));
    await h.call("edit_text_file", {
      workdir: "rw",
      path: "e.txt",
      expected_revision: created.revision,
      edits: [
        { old_text: "a", new_text: "c" },
        { old_text: "b", new_text: "d" },
      ],
    });
    expect(toolLines().at(-1)).toMatchObject({ tool: "edit_text_file", success: true, edit_count: 2, edits_applied: 2, bytes_before: 3, bytes_after: 3 });
    for (const line of toolLines()) {
      for (const key of ["content", "query", "glob", "path", "old_text", "new_text", "data_base64", "text", "pattern", "sha256"]) {
        expect(key in line).toBe(false);
      }
    }
  });
});
