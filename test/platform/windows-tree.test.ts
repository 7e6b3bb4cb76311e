// directory_tree and edit_text_file's dry run on the Windows file backend, end to end: an MCP
// client (the SDK's Client over StdioClientTransport) speaking to the compiled
// dist/serverfs-windows-x64.exe, with real files in a temp tree. Runs on Windows and in the
// Windows lane under Wine (scripts/windows-lane/run.sh); skips elsewhere because the executable
// and its ntdll calls exist only on Windows. Build the executable first:
// `./node_modules/.bin/bun build/compile.ts windows-x64`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { errorCode, ok } from "../mcp/helpers.ts";
import { WINE_LINKS_FIXTURE, removeTree, connectWindowsServe, callTool } from "../support/windows-serve.ts";

const onWindows = process.platform === "win32";
const underWine = onWindows && (await import("../../platform/fs/windows.ts")).underWine();

interface Node {
  name: string;
  type: string;
  size?: number;
  children?: Node[];
  truncated?: true;
}

let base = "";
let client: Client;


const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> => callTool(client, name, args);

/** Depth-first paths: `dir/` for directories, `name@` for symlinks. */
function flat(node: Node, prefix = ""): string[] {
  const out: string[] = [];
  for (const c of node.children ?? []) {
    const p = `${prefix}${c.name}`;
    out.push(c.type === "directory" ? `${p}/` : c.type === "symlink" ? `${p}@` : p);
    if (c.children !== undefined) out.push(...flat(c, `${p}/`));
  }
  return out;
}

describe.skipIf(!onWindows)("directory_tree and edit dry_run on serverfs-windows-x64.exe (needs Windows or the Wine lane)", () => {
  beforeAll(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-wintree-")));
    const ro = path.join(base, "ro");
    for (const d of ["src/lib/deep", "docs", ".git/objects"]) fs.mkdirSync(path.join(ro, d), { recursive: true });
    fs.writeFileSync(path.join(ro, "README.md"), "hello\r\n");
    fs.writeFileSync(path.join(ro, "src", "main.ts"), "x".repeat(1000));
    fs.writeFileSync(path.join(ro, "src", "lib", "util.ts"), "u\n");
    fs.writeFileSync(path.join(ro, "src", "lib", "deep", "leaf.ts"), "leaf\n");
    fs.writeFileSync(path.join(ro, "src", "ID_RSA"), "PRIVATE\n"); // denied whatever its case
    fs.writeFileSync(path.join(ro, "docs", "Server.PEM"), "CERT\n");
    fs.writeFileSync(path.join(ro, ".env"), "TOKEN=1\n");
    fs.writeFileSync(path.join(ro, ".git", "HEAD"), "ref\n");
    for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(ro, "docs", `page${String(i).padStart(2, "0")}.md`), "p".repeat(i));
    fs.mkdirSync(path.join(base, "rw"));
    fs.mkdirSync(path.join(base, "outside"));
    fs.writeFileSync(path.join(base, "outside", "x.txt"), "outside\n");
    const config = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      config,
      [
        "[[workdirs]]",
        'alias = "ro"',
        `path = ${JSON.stringify(ro)}`,
        "[[workdirs]]",
        'alias = "rw"',
        `path = ${JSON.stringify(path.join(base, "rw"))}`,
        "read_only = false",
        "",
      ].join("\n"),
    );
    client = await connectWindowsServe("windows-tree-test", ["--config", config], base, base);
    // caches the output-schema validators: every answer below is checked against the recursive schema
    await client.listTools();
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    if (base !== "") removeTree(base);
  });

  test("the tree goes through the backend: nested nodes, sizes on disk, policy applied in any case", async () => {
    const res = await call("directory_tree", { workdir: "ro", max_depth: 3 });
    const out = ok<{ tree: Node; returned: number; truncated: boolean; depth_limited: boolean }>(res);
    const pages = Array.from({ length: 40 }, (_, i) => `docs/page${String(i).padStart(2, "0")}.md`);
    expect(flat(out.tree)).toEqual(["README.md", "docs/", ...pages, "src/", "src/lib/", "src/lib/deep/", "src/lib/util.ts", "src/main.ts"]);
    expect(out).toMatchObject({ returned: 47, truncated: false, depth_limited: true });
    const src = out.tree.children!.find((c) => c.name === "src")!;
    expect(src.children!.find((c) => c.name === "main.ts")).toEqual({ name: "main.ts", type: "file", size: 1000 });
    const docs = out.tree.children!.find((c) => c.name === "docs")!;
    for (const c of docs.children!) expect(c.size).toBe(fs.statSync(path.join(base, "ro", "docs", c.name)).size);
    expect((res.content[0] as { text: string }).text.split("\n").slice(0, 3)).toEqual(["./", "  README.md  7 B", "  docs/"]);
    // a backslash separates components; the answer spells the path with '/'
    const deep = ok<{ path: string; tree: Node }>(await call("directory_tree", { workdir: "ro", path: "src\\lib" }));
    expect(deep.path).toBe("src/lib");
    expect(flat(deep.tree)).toEqual(["deep/", "deep/leaf.ts", "util.ts"]);
  });

  test("the entry limit cuts level by level and says where", async () => {
    const out = ok<{ tree: Node; returned: number; truncated: boolean }>(await call("directory_tree", { workdir: "ro", limit: 10 }));
    expect(out).toMatchObject({ returned: 10, truncated: true });
    const docs = out.tree.children!.find((c) => c.name === "docs")!;
    expect(docs.truncated).toBe(true);
    expect(docs.children!.map((c) => c.name)).toEqual(Array.from({ length: 7 }, (_, i) => `page${String(i).padStart(2, "0")}.md`));
    expect(out.tree.children!.find((c) => c.name === "src")).toEqual({ name: "src", type: "directory", children: [], truncated: true });
  });

  test("escapes, drives, devices and refused names never list anything", async () => {
    for (const [p, code] of [
      ["..", "PATH_OUTSIDE_WORKDIR"],
      ["..\\outside", "PATH_OUTSIDE_WORKDIR"],
      ["C:\\Windows", "PATH_OUTSIDE_WORKDIR"],
      ["\\\\server\\share", "PATH_OUTSIDE_WORKDIR"],
      ["\\src", "PATH_OUTSIDE_WORKDIR"],
      ["NUL", "INVALID_NAME"],
      ["src:stream", "INVALID_NAME"],
      [".GIT", "HIDDEN_PATH_NOT_ALLOWED"],
      ["src\\Id_Rsa", "DENIED_PATH"],
      ["README.md", "NOT_A_DIRECTORY"],
    ] as const) {
      expect([p, errorCode(await call("directory_tree", { workdir: "ro", path: p }))]).toEqual([p, code]);
    }
  });

  // Unix symlinks committed to the repository (test/platform/fixtures/wine-links): Wine follows them
  // even under FILE_OPEN_REPARSE_POINT, so the backend's own check is what keeps the walk out.
  test.skipIf(!underWine)("a tree over Unix symlinks seen through Wine never shows or enters them (Wine lane)", async () => {
    const fixture = WINE_LINKS_FIXTURE;
    const links = await connectWindowsServe("windows-tree-links", ["--workdir", `l=${fixture}`], base);
    try {
      const ask = async (name: string, args: Record<string, unknown>) => (await links.callTool({ name, arguments: { workdir: "l", ...args } })) as CallToolResult;
      const tree = ok<{ tree: Node; truncated: boolean }>(await ask("directory_tree", { max_depth: 10 })).tree;
      // Under Wine the backend cannot describe a followed Unix link at all (its name check refuses
      // the open), so the tree, like list_directory, leaves the links out; nothing they point to appears
      expect(flat(tree)).toEqual(["a.txt", "sub/", "sub/b.txt"]);
      const listed = ok<{ entries: Array<{ name: string }> }>(await ask("list_directory", {})).entries;
      expect(tree.children!.map((c) => c.name)).toEqual(listed.map((e) => e.name));
      expect(errorCode(await ask("directory_tree", { path: "dir-link" }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(errorCode(await ask("directory_tree", { path: "out-link" }))).toBe("SYMLINK_NOT_ALLOWED");
    } finally {
      await links.close();
    }
  });

  // Wine cannot create a junction or a symlink on its Unix-backed drives, so this needs real Windows.
  test.skipIf(underWine)("a junction in the tree is a symlink node, as in list_directory, and is never entered (real Windows)", async () => {
    const jn = path.join(base, "ro", "jn");
    fs.symlinkSync(path.join(base, "outside"), jn, "junction");
    try {
      const tree = ok<{ tree: Node }>(await call("directory_tree", { workdir: "ro", max_depth: 10 })).tree;
      const listed = ok<{ entries: Array<{ name: string; type: string }> }>(await call("list_directory", { workdir: "ro" })).entries;
      const node = tree.children!.find((c) => c.name === "jn");
      // a junction is a name-surrogate: both report it, as a symlink, and neither enters it
      expect(node).toEqual({ name: "jn", type: "symlink" });
      expect(listed.find((e) => e.name === "jn")?.type).toBe("symlink");
      expect(JSON.stringify(tree)).not.toContain("x.txt");
      expect(errorCode(await call("directory_tree", { workdir: "ro", path: "jn" }))).toBe("REPARSE_POINT_NOT_ALLOWED");
    } finally {
      fs.rmSync(jn, { force: true });
    }
  });

  test("edit_text_file dry_run: the exact diff of a CRLF file, nothing written, the real edit returns the same diff", async () => {
    const rw = path.join(base, "rw");
    const file = path.join(rw, "crlf.txt");
    fs.writeFileSync(file, "one\r\ntwo\r\nthree");
    const rev = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "crlf.txt" })).revision;
    const before = fs.statSync(file, { bigint: true });
    const edits = [{ old_text: "two", new_text: "zwei" }];
    const diff = "--- crlf.txt\n+++ crlf.txt\n@@ -1,3 +1,3 @@\n one\r\n-two\r\n+zwei\r\n three\n\\ No newline at end of file\n";
    const dry = ok<Record<string, unknown>>(await call("edit_text_file", { workdir: "rw", path: "crlf.txt", expected_revision: rev, edits, dry_run: true }));
    expect(dry).toMatchObject({ edited: false, dry_run: true, revision: rev, revision_before: rev, bytes_after: 16, diff, diff_truncated: false });
    expect(fs.readFileSync(file)).toEqual(Buffer.from("one\r\ntwo\r\nthree"));
    expect(fs.statSync(file, { bigint: true }).mtimeNs).toBe(before.mtimeNs);
    expect(fs.readdirSync(rw)).toEqual(["crlf.txt"]);
    expect(errorCode(await call("edit_text_file", { workdir: "rw", path: "crlf.txt", expected_revision: "v1:0000000000000000", edits, dry_run: true }))).toBe("REVISION_CONFLICT");
    expect(errorCode(await call("edit_text_file", { workdir: "rw", path: "CRLF.TXT:stream", expected_revision: rev, edits, dry_run: true }))).toBe("INVALID_NAME");
    const real = ok<Record<string, unknown>>(await call("edit_text_file", { workdir: "rw", path: "crlf.txt", expected_revision: rev, edits }));
    expect(real).toMatchObject({ edited: true, dry_run: false, diff, diff_truncated: false });
    expect(fs.readFileSync(file)).toEqual(Buffer.from("one\r\nzwei\r\nthree"));
    expect(fs.readdirSync(rw)).toEqual(["crlf.txt"]);
  });
});
