// The error contract through the real MCP surface: `CODE: detail` text and structuredContent
// {code, message} that an SDK client accepts against the published outputSchema, for the
// representative codes, plus precedence rules and argument validation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { type Harness, connect, errorCode, makeRegistry, ok, removeDir, tempDir } from "./helpers.ts";

let base: string;
let ro: string;
let rw: string;
let outside: string;
let h: Harness;

beforeAll(async () => {
  base = tempDir();
  ro = path.join(base, "ro");
  rw = path.join(base, "rw");
  outside = path.join(base, "outside");
  for (const d of [ro, rw, outside]) fs.mkdirSync(d);
  fs.writeFileSync(path.join(outside, "secret.txt"), "outside-secret\n");
  fs.writeFileSync(path.join(ro, "notes.txt"), "hello\n");
  fs.symlinkSync(outside, path.join(ro, "escape"));
  fs.symlinkSync(outside, path.join(rw, "escape"));
  fs.writeFileSync(path.join(rw, "doc.txt"), "alpha\n");
  h = await connect(
    makeRegistry([
      { alias: "ro", path: ro },
      { alias: "rw", path: rw, read_only: false },
    ]),
  );
});
afterAll(async () => {
  await h.close();
  removeDir(base);
});

describe("coded errors", () => {
  test("WORKDIR_NOT_FOUND names the caller's alias", async () => {
    const res = await h.call("list_directory", { workdir: "nope" });
    expect(errorCode(res)).toBe("WORKDIR_NOT_FOUND");
    expect((res.structuredContent as { message: string }).message).toContain("nope");
  });

  test("PATH_OUTSIDE_WORKDIR for '..', absolute and '~' paths, never echoing a host path", async () => {
    for (const p of ["../../etc/passwd", "/etc/passwd", "~/x", "a/../../b"]) {
      const res = await h.call("read_text_file", { workdir: "ro", path: p });
      expect(errorCode(res)).toBe("PATH_OUTSIDE_WORKDIR");
      expect(JSON.stringify(res)).not.toContain(base);
    }
  });

  test("SYMLINK_NOT_ALLOWED through a parent symlink; the outside file is never read", async () => {
    const res = await h.call("read_text_file", { workdir: "ro", path: "escape/secret.txt" });
    expect(errorCode(res)).toBe("SYMLINK_NOT_ALLOWED");
    expect(JSON.stringify(res)).not.toContain("outside-secret");
    const created = await h.call("create_text_file", { workdir: "rw", path: "escape/new.txt", content: "x" });
    expect(errorCode(created)).toBe("SYMLINK_NOT_ALLOWED");
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
  });

  test("WORKDIR_READ_ONLY wins over the .env path policy", async () => {
    const res = await h.call("create_text_file", { workdir: "ro", path: ".env", content: "K=V" });
    expect(errorCode(res)).toBe("WORKDIR_READ_ONLY");
    const rwRes = await h.call("create_text_file", { workdir: "rw", path: ".env", content: "K=V" });
    expect(errorCode(rwRes)).toBe("HIDDEN_PATH_NOT_ALLOWED");
    expect(fs.existsSync(path.join(ro, ".env"))).toBe(false);
    expect(fs.existsSync(path.join(rw, ".env"))).toBe(false);
  });

  test("REVISION_CONFLICT for a stale or bogus token leaves the bytes alone", async () => {
    const read = ok<{ revision: string }>(await h.call("read_text_file", { workdir: "rw", path: "doc.txt" }));
    const edit = { old_text: "alpha", new_text: "beta" };
    const bogus = await h.call("edit_text_file", {
      workdir: "rw",
      path: "doc.txt",
      expected_revision: "v1:0000000000000000",
      edits: [edit],
    });
    expect(errorCode(bogus)).toBe("REVISION_CONFLICT");
    const first = ok(await h.call("edit_text_file", { workdir: "rw", path: "doc.txt", expected_revision: read.revision, edits: [edit] }));
    expect(first).toMatchObject({ edited: true, edits_applied: 1 });
    const stale = await h.call("edit_text_file", {
      workdir: "rw",
      path: "doc.txt",
      expected_revision: read.revision,
      edits: [{ old_text: "beta", new_text: "gamma" }],
    });
    expect(errorCode(stale)).toBe("REVISION_CONFLICT");
    expect(fs.readFileSync(path.join(rw, "doc.txt"))).toEqual(Buffer.from("beta\n"));
  });

  test("every mutation in a read-only workdir is WORKDIR_READ_ONLY; the same call passes in read-write", async () => {
    fs.writeFileSync(path.join(ro, "victim.txt"), "keep\n");
    fs.mkdirSync(path.join(ro, "victim-dir"));
    fs.writeFileSync(path.join(rw, "victim.txt"), "keep\n");
    fs.mkdirSync(path.join(rw, "victim-dir"));
    fs.writeFileSync(path.join(ro, "mv.txt"), "move me\n");
    fs.writeFileSync(path.join(rw, "mv.txt"), "move me\n");
    const stat = (wd: string, p: string) => h.call("stat_file", { workdir: wd, path: p });
    for (const wd of ["ro", "rw"]) {
      const fileRev = ok<{ revision: string }>(await stat(wd, "victim.txt")).revision;
      const mvRev = ok<{ revision: string }>(await stat(wd, "mv.txt")).revision;
      const calls: Array<[string, Record<string, unknown>]> = [
        ["create_text_file", { workdir: wd, path: "made.txt", content: "new" }],
        ["edit_text_file", { workdir: wd, path: "victim.txt", expected_revision: fileRev, edits: [{ old_text: "keep", new_text: "gone" }] }],
        ["create_directory", { workdir: wd, path: "made-dir" }],
        ["move_file", { workdir: wd, source: "mv.txt", destination: "moved.txt", expected_revision: mvRev }],
      ];
      for (const [tool, args] of calls) {
        const res = await h.call(tool, args);
        if (wd === "ro") expect({ tool, code: errorCode(res) }).toEqual({ tool, code: "WORKDIR_READ_ONLY" });
        else expect({ tool, ok: !res.isError }).toEqual({ tool, ok: true });
      }
      const fileRev2 = ok<{ revision: string }>(await stat(wd, "victim.txt")).revision;
      const dirRev = ok<{ revision: string }>(await stat(wd, "victim-dir")).revision;
      for (const [tool, args] of [
        ["delete_file", { workdir: wd, path: "victim.txt", expected_revision: fileRev2 }],
        ["delete_directory", { workdir: wd, path: "victim-dir", expected_revision: dirRev }],
      ] as Array<[string, Record<string, unknown>]>) {
        const res = await h.call(tool, args);
        if (wd === "ro") expect({ tool, code: errorCode(res) }).toEqual({ tool, code: "WORKDIR_READ_ONLY" });
        else expect({ tool, ok: !res.isError }).toEqual({ tool, ok: true });
      }
    }
    expect(fs.readFileSync(path.join(ro, "victim.txt"), "utf8")).toBe("keep\n");
    expect(fs.existsSync(path.join(ro, "victim-dir"))).toBe(true);
    expect(fs.existsSync(path.join(ro, "made.txt"))).toBe(false);
    expect(fs.existsSync(path.join(rw, "victim.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(rw, "made.txt"), "utf8")).toBe("new");
    expect([fs.existsSync(path.join(ro, "mv.txt")), fs.existsSync(path.join(ro, "moved.txt"))]).toEqual([true, false]);
    expect([fs.existsSync(path.join(rw, "mv.txt")), fs.readFileSync(path.join(rw, "moved.txt"), "utf8")]).toEqual([false, "move me\n"]);
  });
});

describe("argument validation", () => {
  test("schema violations are coded INVALID_ARGUMENT results naming the parameter, not the value", async () => {
    const missing = await h.call("read_text_file", { workdir: "ro" });
    expect(errorCode(missing)).toBe("INVALID_ARGUMENT");
    expect((missing.structuredContent as { message: string }).message).toContain("'path'");

    const wrongType = await h.call("list_directory", { workdir: "ro", limit: "SECRET-LIMIT-VALUE" });
    expect(errorCode(wrongType)).toBe("INVALID_ARGUMENT");
    expect(JSON.stringify(wrongType)).not.toContain("SECRET-LIMIT-VALUE");

    const zero = await h.call("list_directory", { workdir: "ro", limit: 0 });
    expect(errorCode(zero)).toBe("INVALID_ARGUMENT");

    const unknownKey = await h.call("stat_file", { workdir: "ro", path: "", max_line: 3 });
    expect(errorCode(unknownKey)).toBe("INVALID_ARGUMENT");

    const noEdits = await h.call("edit_text_file", { workdir: "rw", path: "doc.txt", expected_revision: "v1:0", edits: [] });
    expect(errorCode(noEdits)).toBe("INVALID_ARGUMENT");
  });

  test("an unknown tool is a JSON-RPC InvalidParams error, not a result", async () => {
    const err = await h.client.callTool({ name: "run_shell", arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });
});

describe("binary error codes", () => {
  let hb: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    fs.mkdirSync(path.join(dir, "bin"));
    fs.mkdirSync(path.join(dir, "plain"));
    fs.writeFileSync(path.join(dir, "plain", "x.bin"), Buffer.from([0, 1, 2]));
    hb = await connect(
      makeRegistry([
        { alias: "bin", path: path.join(dir, "bin"), read_only: false, binary_transfer_enabled: true },
        { alias: "plain", path: path.join(dir, "plain"), read_only: false },
        { alias: "robin", path: path.join(dir, "bin"), binary_transfer_enabled: true },
        { alias: "roplain", path: path.join(dir, "plain") },
      ]),
    );
  });
  afterAll(async () => {
    await hb.close();
    removeDir(dir);
  });

  test("INVALID_BASE64 for malformed payloads; nothing is created", async () => {
    for (const bad of ["***", "YQ=", "Y Q==", "数据"]) {
      const res = await hb.call("upload_binary_file", { workdir: "bin", path: "u.bin", data_base64: bad });
      expect({ bad, code: errorCode(res) }).toEqual({ bad, code: "INVALID_BASE64" });
    }
    expect(fs.readdirSync(path.join(dir, "bin"))).toEqual([]);
  });

  test("upload in a read-only workdir is WORKDIR_READ_ONLY, ahead of binary-disabled and of the .env policy", async () => {
    for (const [workdir, p] of [
      ["robin", "u.bin"],
      ["roplain", "u.bin"],
      ["robin", ".env"],
    ]) {
      const res = await hb.call("upload_binary_file", { workdir, path: p, data_base64: "AAE=" });
      expect({ workdir, p, code: errorCode(res) }).toEqual({ workdir, p, code: "WORKDIR_READ_ONLY" });
    }
    // Download stays allowed in a read-only workdir with binary transfer.
    const dl = await hb.call("download_binary_file", { workdir: "roplain", path: "x.bin" });
    expect(errorCode(dl)).toBe("BINARY_TRANSFER_DISABLED");
    fs.writeFileSync(path.join(dir, "bin", "r.bin"), Buffer.from([7, 8]));
    expect((ok(await hb.call("download_binary_file", { workdir: "robin", path: "r.bin" })) as { size: number }).size).toBe(2);
    fs.rmSync(path.join(dir, "bin", "r.bin"));
    expect(fs.readdirSync(path.join(dir, "bin"))).toEqual([]);
  });

  test("BINARY_TRANSFER_DISABLED on a workdir without binary transfer, for both tools", async () => {
    const dl = await hb.call("download_binary_file", { workdir: "plain", path: "x.bin" });
    expect(errorCode(dl)).toBe("BINARY_TRANSFER_DISABLED");
    const up = await hb.call("upload_binary_file", { workdir: "plain", path: "y.bin", data_base64: "AAE=" });
    expect(errorCode(up)).toBe("BINARY_TRANSFER_DISABLED");
    expect(fs.existsSync(path.join(dir, "plain", "y.bin"))).toBe(false);
  });
});
