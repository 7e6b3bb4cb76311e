// Success paths through the real MCP surface: structuredContent, its text mirror, and the bytes
// on disk afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { type Harness, connect, makeRegistry, ok, removeDir, tempDir } from "./helpers.ts";

let base: string;
let h: Harness;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489", "hex");

beforeAll(async () => {
  base = tempDir();
  for (const d of ["docs", "work", "media"]) fs.mkdirSync(path.join(base, d));
  fs.writeFileSync(path.join(base, "docs", "readme.md"), "line one\r\nline two\nneedle here\n");
  fs.mkdirSync(path.join(base, "docs", "sub"));
  fs.writeFileSync(path.join(base, "docs", "sub", "deep.md"), "another needle\n");
  fs.writeFileSync(path.join(base, "media", "a b.bin"), PNG);
  fs.writeFileSync(path.join(base, "media", "pic.png"), PNG);
  h = await connect(
    makeRegistry([
      { alias: "docs", path: path.join(base, "docs"), description: "project docs" },
      { alias: "work", path: path.join(base, "work"), read_only: false },
      { alias: "media", path: path.join(base, "media"), binary_transfer_enabled: true, read_only: false },
    ]),
  );
});
afterAll(async () => {
  await h.close();
  removeDir(base);
});

describe("read tools", () => {
  test("list_workdirs reports access, binary transfer and agent policy per workdir, in configured order", async () => {
    const out = ok<{ workdirs: Array<Record<string, unknown>> }>(await h.call("list_workdirs"));
    expect(out.workdirs).toEqual([
      { alias: "docs", description: "project docs", access: "read-only", binary_transfer: false, agent_mode: "disabled", agent_runtimes: [] },
      { alias: "work", description: null, access: "read-write", binary_transfer: false, agent_mode: "disabled", agent_runtimes: [] },
      { alias: "media", description: null, access: "read-write", binary_transfer: true, agent_mode: "disabled", agent_runtimes: [] },
    ]);
    expect(JSON.stringify(out)).not.toContain(base);
  });

  test("list_directory, stat_file and read_text_file return their structured shapes with a text mirror", async () => {
    const list = ok<{ entries: Array<{ name: string; type: string }>; returned: number; has_more: boolean }>(
      await h.call("list_directory", { workdir: "docs" }),
    );
    expect(list.entries.map((e) => [e.name, e.type])).toEqual([
      ["readme.md", "file"],
      ["sub", "directory"],
    ]);
    expect(list).toMatchObject({ returned: 2, has_more: false });

    const stat = ok<Record<string, unknown>>(await h.call("stat_file", { workdir: "docs", path: "readme.md" }));
    expect(stat).toMatchObject({ workdir: "docs", path: "readme.md", type: "file", size: 31 });
    expect(stat.revision).toMatch(/^v1:[0-9a-f]{16}$/);

    const read = ok<Record<string, unknown>>(await h.call("read_text_file", { workdir: "docs", path: "readme.md", max_lines: 2 }));
    expect(read).toMatchObject({
      content: "line one\r\nline two\n",
      start_line: 1,
      end_line: 2,
      has_more: true,
      next_start_line: 3,
      bytes_returned: 19,
      revision: stat.revision,
    });
  });

  test("find_files and search_text", async () => {
    const found = ok<{ matches: Array<{ path: string }> }>(await h.call("find_files", { workdir: "docs", pattern: "*.md" }));
    expect(found.matches.map((m) => m.path).sort()).toEqual(["readme.md", "sub/deep.md"]);
    const hits = ok<{ matches: Array<{ path: string; line: number; text: string }>; truncated: boolean }>(
      await h.call("search_text", { workdir: "docs", query: "needle" }),
    );
    expect(hits.matches.map((m) => [m.path, m.line, m.text]).sort()).toEqual([
      ["readme.md", 3, "needle here"],
      ["sub/deep.md", 1, "another needle"],
    ]);
    expect(hits.truncated).toBe(false);
  });
});

describe("mutation tools", () => {
  test("create, edit, mkdir, delete round trip with revisions chaining and exact bytes on disk", async () => {
    const created = ok<{ revision: string; bytes_written: number }>(
      await h.call("create_text_file", { workdir: "work", path: "a.txt", content: "one\r\ntwo\n" }),
    );
    expect(created.bytes_written).toBe(9);
    expect(fs.readFileSync(path.join(base, "work", "a.txt"))).toEqual(Buffer.from("one\r\ntwo\n"));
    const edited = ok<{ revision: string; revision_before: string }>(
      await h.call("edit_text_file", {
        workdir: "work",
        path: "a.txt",
        expected_revision: created.revision,
        edits: [{ old_text: "two", new_text: "zwei" }],
      }),
    );
    expect(edited.revision_before).toBe(created.revision);
    expect(fs.readFileSync(path.join(base, "work", "a.txt"))).toEqual(Buffer.from("one\r\nzwei\n"));
    const deleted = ok(await h.call("delete_file", { workdir: "work", path: "a.txt", expected_revision: edited.revision }));
    expect(deleted).toMatchObject({ deleted: true, bytes_deleted: 10, revision_deleted: edited.revision });
    expect(fs.existsSync(path.join(base, "work", "a.txt"))).toBe(false);

    const dir = ok<{ revision: string }>(await h.call("create_directory", { workdir: "work", path: "d" }));
    expect(fs.statSync(path.join(base, "work", "d")).isDirectory()).toBe(true);
    ok(await h.call("delete_directory", { workdir: "work", path: "d", expected_revision: dir.revision }));
    expect(fs.existsSync(path.join(base, "work", "d"))).toBe(false);
  });
});

describe("move_file", () => {
  test("moves a file and a directory with bytes kept; never overwrites; refusals are coded and name no host path", async () => {
    const work = path.join(base, "work");
    fs.mkdirSync(path.join(work, "mv/sub"), { recursive: true });
    fs.writeFileSync(path.join(work, "mv/a.txt"), "alpha\n");
    fs.writeFileSync(path.join(work, "mv/taken.txt"), "taken\n");
    const rev = async (p: string) => ok<{ revision: string }>(await h.call("stat_file", { workdir: "work", path: p })).revision;
    const moved = ok<{ revision: string; type: string }>(
      await h.call("move_file", { workdir: "work", source: "mv/a.txt", destination: "mv/sub/b.txt", expected_revision: await rev("mv/a.txt") }),
    );
    expect(moved.type).toBe("file");
    expect(moved.revision).toBe(await rev("mv/sub/b.txt"));
    expect(fs.existsSync(path.join(work, "mv/a.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(work, "mv/sub/b.txt"), "utf8")).toBe("alpha\n");

    const taken = await h.call("move_file", { workdir: "work", source: "mv/sub/b.txt", destination: "mv/taken.txt", expected_revision: moved.revision });
    expect(taken.isError).toBe(true);
    expect((taken.structuredContent as { code: string }).code).toBe("PATH_ALREADY_EXISTS");
    expect(fs.readFileSync(path.join(work, "mv/taken.txt"), "utf8")).toBe("taken\n");
    const self = await h.call("move_file", { workdir: "work", source: "mv", destination: "mv/sub/mv", expected_revision: await rev("mv") });
    expect((self.structuredContent as { code: string }).code).toBe("MOVE_INTO_SELF");
    const out = await h.call("move_file", { workdir: "work", source: "mv/taken.txt", destination: "../docs/x.txt", expected_revision: await rev("mv/taken.txt") });
    expect((out.structuredContent as { code: string }).code).toBe("PATH_OUTSIDE_WORKDIR");
    for (const r of [taken, self, out]) expect(JSON.stringify(r)).not.toContain(base);

    const dir = ok<{ type: string }>(await h.call("move_file", { workdir: "work", source: "mv", destination: "mv2", expected_revision: await rev("mv") }));
    expect(dir.type).toBe("directory");
    expect(fs.readFileSync(path.join(work, "mv2/sub/b.txt"), "utf8")).toBe("alpha\n");
    expect(fs.existsSync(path.join(work, "mv"))).toBe(false);
    // a read-only workdir refuses it before anything else
    const ro = await h.call("move_file", { workdir: "docs", source: "readme.md", destination: "r.md", expected_revision: "v1:0000000000000000" });
    expect((ro.structuredContent as { code: string }).code).toBe("WORKDIR_READ_ONLY");
    expect(fs.existsSync(path.join(base, "docs", "readme.md"))).toBe(true);
  });
});

describe("concurrent calls", () => {
  test("two concurrent creates of one path: exactly one wins, the winner's bytes are intact", async () => {
    const [a, b] = await Promise.all([
      h.call("create_text_file", { workdir: "work", path: "race.txt", content: "first" }),
      h.call("create_text_file", { workdir: "work", path: "race.txt", content: "second" }),
    ]);
    const outcomes = [a!, b!].map((r) => (r.isError ? (r.structuredContent as { code: string }).code : "ok")).sort();
    expect(outcomes).toEqual(["PATH_ALREADY_EXISTS", "ok"]);
    const winner = a!.isError ? "second" : "first";
    expect(fs.readFileSync(path.join(base, "work", "race.txt"), "utf8")).toBe(winner);
    expect(fs.readdirSync(path.join(base, "work")).filter((n) => n.startsWith(".serverfs-tmp-"))).toEqual([]);
  });

  test("two concurrent edits with the same revision: one applies, the other is REVISION_CONFLICT", async () => {
    const made = ok<{ revision: string }>(await h.call("create_text_file", { workdir: "work", path: "cas.txt", content: "v0" }));
    const edit = (to: string) =>
      h.call("edit_text_file", { workdir: "work", path: "cas.txt", expected_revision: made.revision, edits: [{ old_text: "v0", new_text: to }] });
    const [a, b] = await Promise.all([edit("v1"), edit("v2")]);
    const outcomes = [a!, b!].map((r) => (r.isError ? (r.structuredContent as { code: string }).code : "ok")).sort();
    expect(outcomes).toEqual(["REVISION_CONFLICT", "ok"]);
    expect(fs.readFileSync(path.join(base, "work", "cas.txt"), "utf8")).toBe(a!.isError ? "v2" : "v1");
  });
});

describe("binary tools", () => {
  test("download returns the exact bytes as an embedded resource with a percent-encoded URI", async () => {
    const res = await h.call("download_binary_file", { workdir: "media", path: "a b.bin" });
    const meta = ok<Record<string, unknown>>(res);
    expect(meta).toEqual({
      workdir: "media",
      path: "a b.bin",
      size: PNG.length,
      mime_type: "application/octet-stream",
      sha256: createHash("sha256").update(PNG).digest("hex"),
      revision: expect.stringMatching(/^v1:[0-9a-f]{16}$/),
    });
    const block = res.content[0]!;
    if (block.type !== "resource" || !("blob" in block.resource)) throw new Error("expected an embedded blob resource");
    expect(block.resource.uri).toBe("serverfs://media/a%20b.bin");
    expect(block.resource.mimeType).toBe("application/octet-stream");
    expect(Buffer.from(block.resource.blob, "base64")).toEqual(PNG);

    const png = await h.call("download_binary_file", { workdir: "media", path: "pic.png" });
    expect((png.structuredContent as { mime_type: string }).mime_type).toBe("image/png");
  });

  test("upload writes exactly the decoded bytes; overwrite needs the current revision", async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 10, 13]);
    const up = ok<{ revision: string; created: boolean; replaced: boolean; sha256: string }>(
      await h.call("upload_binary_file", { workdir: "media", path: "u.bin", data_base64: bytes.toString("base64") }),
    );
    expect(up).toMatchObject({ created: true, replaced: false, sha256: createHash("sha256").update(bytes).digest("hex") });
    expect(fs.readFileSync(path.join(base, "media", "u.bin"))).toEqual(bytes);
    const again = ok<{ replaced: boolean; revision_before: string }>(
      await h.call("upload_binary_file", {
        workdir: "media",
        path: "u.bin",
        data_base64: "AAA=",
        overwrite: true,
        expected_revision: up.revision,
      }),
    );
    expect(again).toMatchObject({ replaced: true, revision_before: up.revision });
    expect(fs.readFileSync(path.join(base, "media", "u.bin"))).toEqual(Buffer.from([0, 0]));
  });
});
