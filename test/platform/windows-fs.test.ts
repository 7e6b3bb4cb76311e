// The Windows file backend end to end: an MCP client (the SDK's Client over StdioClientTransport)
// speaking to the compiled dist/serverfs-windows-x64.exe, with real files in a temp tree. Runs on
// Windows and in the Windows lane under Wine (scripts/windows-lane/run.sh); skips elsewhere
// because the executable and its ntdll calls exist only on Windows. Build the executable first:
// `./node_modules/.bin/bun build/compile.ts windows-x64`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { errorCode, ok } from "../mcp/helpers.ts";
import { treeSnapshot as snapshot } from "../support/tree.ts";
import { WINE_LINKS_FIXTURE, removeTree, connectWindowsServe, callTool } from "../support/windows-serve.ts";
import { shortPathName } from "./windows-helpers.ts";

const onWindows = process.platform === "win32";
/** Wine cannot create symlinks or junctions on its Unix-backed drives, has no 8.3 names and no DACLs. */
const underWine = onWindows && (await import("../../platform/fs/windows.ts")).underWine();
const PIXELS = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255, 254, 13, 10, 26, 0]);

let base = "";
let client: Client;



const call = (name: string, args: Record<string, unknown>): Promise<CallToolResult> => callTool(client, name, args);

describe.skipIf(!onWindows)("serverfs-windows-x64.exe over MCP stdio (needs Windows or the Wine lane)", () => {
  beforeAll(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-winfs-")));
    const ro = path.join(base, "ro");
    fs.mkdirSync(path.join(ro, "sub"), { recursive: true });
    fs.writeFileSync(path.join(ro, "a.txt"), "hello needle\r\nsecond line\n");
    fs.writeFileSync(path.join(ro, "sub", "deep.md"), "another needle\n");
    fs.writeFileSync(path.join(ro, "id_rsa"), "PRIVATE KEY\n");
    fs.writeFileSync(path.join(ro, "server.pem"), "CERT\n");
    fs.writeFileSync(path.join(ro, ".env"), "TOKEN=1\n");
    fs.writeFileSync(path.join(ro, "pic.png"), PIXELS);
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
        "binary_transfer_enabled = true",
        "[[workdirs]]",
        'alias = "rw"',
        `path = ${JSON.stringify(path.join(base, "rw"))}`,
        "read_only = false",
        "binary_transfer_enabled = true",
        "",
      ].join("\n"),
    );
    client = await connectWindowsServe("windows-fs-test", ["--config", config], base, base);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    if (base !== "") removeTree(base);
  });

  test("list, find, search, read and stat go through the backend, policy applied", async () => {
    const listed = ok<{ entries: Array<{ name: string; type: string }> }>(await call("list_directory", { workdir: "ro" }));
    expect(listed.entries.map((e) => `${e.name}:${e.type}`).sort()).toEqual(["a.txt:file", "pic.png:file", "sub:directory"]);
    const found = ok<{ matches: Array<{ path: string }> }>(await call("find_files", { workdir: "ro", pattern: "*.md" }));
    expect(found.matches.map((m) => m.path)).toEqual(["sub/deep.md"]);
    const hits = ok<{ matches: Array<{ path: string; line: number }> }>(await call("search_text", { workdir: "ro", query: "needle" }));
    expect(hits.matches.map((m) => `${m.path}:${m.line}`).sort()).toEqual(["a.txt:1", "sub/deep.md:1"]);
    const read = ok<{ content: string; revision: string }>(await call("read_text_file", { workdir: "ro", path: "a.txt" }));
    expect(read.content).toBe("hello needle\r\nsecond line\n");
    // backslash separates components on Windows, and the answer shows the canonical spelling
    const deep = ok<{ path: string; content: string }>(await call("read_text_file", { workdir: "ro", path: "sub\\deep.md" }));
    expect(deep).toMatchObject({ path: "sub/deep.md", content: "another needle\n" });
    const stat = ok<{ type: string; size: number; revision: string }>(await call("stat_file", { workdir: "ro", path: "a.txt" }));
    expect(stat).toMatchObject({ type: "file", size: 26, revision: read.revision });
    const dir = ok<{ type: string }>(await call("stat_file", { workdir: "ro", path: "sub" }));
    expect(dir.type).toBe("directory");
  });

  test("create, edit, delete, directories: exact bytes on disk, revisions chain, no temp left", async () => {
    const rw = path.join(base, "rw");
    const created = ok<{ revision: string; bytes_written: number }>(await call("create_text_file", { workdir: "rw", path: "n.txt", content: "one\r\ntwo\n" }));
    expect(created.bytes_written).toBe(9);
    expect(fs.readFileSync(path.join(rw, "n.txt"))).toEqual(Buffer.from("one\r\ntwo\n"));
    expect(errorCode(await call("create_text_file", { workdir: "rw", path: "N.TXT", content: "clobber" }))).toBe("PATH_ALREADY_EXISTS");
    const statted = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "n.txt" }));
    expect(statted.revision).toBe(created.revision);
    const edited = ok<{ revision: string; revision_before: string }>(
      await call("edit_text_file", { workdir: "rw", path: "n.txt", expected_revision: created.revision, edits: [{ old_text: "two", new_text: "zwei" }] }),
    );
    expect(edited.revision_before).toBe(created.revision);
    expect(fs.readFileSync(path.join(rw, "n.txt"))).toEqual(Buffer.from("one\r\nzwei\n"));
    expect(ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "n.txt" })).revision).toBe(edited.revision);
    expect(errorCode(await call("delete_file", { workdir: "rw", path: "n.txt", expected_revision: created.revision }))).toBe("REVISION_CONFLICT");
    const deleted = ok(await call("delete_file", { workdir: "rw", path: "n.txt", expected_revision: edited.revision }));
    expect(deleted).toMatchObject({ deleted: true, bytes_deleted: 10 });
    expect(fs.existsSync(path.join(rw, "n.txt"))).toBe(false);

    const made = ok<{ revision: string }>(await call("create_directory", { workdir: "rw", path: "d" }));
    expect(fs.statSync(path.join(rw, "d")).isDirectory()).toBe(true);
    ok(await call("create_text_file", { workdir: "rw", path: "d\\inner.txt", content: "x" }));
    expect(fs.readFileSync(path.join(rw, "d", "inner.txt"), "utf8")).toBe("x");
    const dirRev = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "d" })).revision;
    expect(errorCode(await call("delete_directory", { workdir: "rw", path: "d", expected_revision: dirRev }))).toBe("DIRECTORY_NOT_EMPTY");
    const inner = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "d/inner.txt" }));
    ok(await call("delete_file", { workdir: "rw", path: "d/inner.txt", expected_revision: inner.revision }));
    const emptied = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "d" }));
    expect(made.revision).toMatch(/^v1:/);
    ok(await call("delete_directory", { workdir: "rw", path: "d", expected_revision: emptied.revision }));
    expect(fs.existsSync(path.join(rw, "d"))).toBe(false);
    expect(fs.readdirSync(rw)).toEqual([]);
  });

  test("binary transfer: download and upload are byte-exact, overwrite needs the revision", async () => {
    const res = await call("download_binary_file", { workdir: "ro", path: "pic.png" });
    const meta = ok<{ sha256: string; size: number }>(res);
    expect(meta).toMatchObject({ size: PIXELS.length, sha256: createHash("sha256").update(PIXELS).digest("hex") });
    const block = res.content[0]!;
    if (block.type !== "resource" || !("blob" in block.resource)) throw new Error("expected an embedded blob resource");
    expect(Buffer.from(block.resource.blob, "base64")).toEqual(PIXELS);
    const up = ok<{ revision: string; created: boolean }>(await call("upload_binary_file", { workdir: "rw", path: "u.bin", data_base64: PIXELS.toString("base64") }));
    expect(up.created).toBe(true);
    expect(fs.readFileSync(path.join(base, "rw", "u.bin"))).toEqual(PIXELS);
    const again = ok<{ replaced: boolean }>(
      await call("upload_binary_file", { workdir: "rw", path: "u.bin", data_base64: "AAEC", overwrite: true, expected_revision: up.revision }),
    );
    expect(again.replaced).toBe(true);
    expect(fs.readFileSync(path.join(base, "rw", "u.bin"))).toEqual(Buffer.from([0, 1, 2]));
    const now = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "u.bin" }));
    ok(await call("delete_file", { workdir: "rw", path: "u.bin", expected_revision: now.revision }));
  });

  test("two concurrent creates of one name in different cases: exactly one wins, with its bytes intact", async () => {
    const [a, b] = await Promise.all([
      call("create_text_file", { workdir: "rw", path: "race.txt", content: "first" }),
      call("create_text_file", { workdir: "rw", path: "RACE.TXT", content: "second" }),
    ]);
    const outcomes = [a, b].map((r) => (r.isError ? errorCode(r) : "ok")).sort();
    expect(outcomes).toEqual(["PATH_ALREADY_EXISTS", "ok"]);
    const names = fs.readdirSync(path.join(base, "rw"));
    expect(names).toHaveLength(1);
    expect(fs.readFileSync(path.join(base, "rw", names[0]!), "utf8")).toBe(a.isError ? "second" : "first");
    const st = ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: "race.txt" }));
    ok(await call("delete_file", { workdir: "rw", path: "Race.Txt", expected_revision: st.revision }));
    expect(fs.readdirSync(path.join(base, "rw"))).toEqual([]);
  });

  const REFUSED: Array<[string, string]> = [
    ["..\\outside\\x.txt", "PATH_OUTSIDE_WORKDIR"],
    ["sub\\..\\..\\outside\\x.txt", "PATH_OUTSIDE_WORKDIR"],
    ["../outside/x.txt", "PATH_OUTSIDE_WORKDIR"],
    ["C:\\Windows\\win.ini", "PATH_OUTSIDE_WORKDIR"],
    ["C:win.ini", "PATH_OUTSIDE_WORKDIR"],
    ["c:/windows/win.ini", "PATH_OUTSIDE_WORKDIR"],
    ["\\Windows\\win.ini", "PATH_OUTSIDE_WORKDIR"],
    ["\\\\server\\share\\x.txt", "PATH_OUTSIDE_WORKDIR"],
    ["//server/share/x.txt", "PATH_OUTSIDE_WORKDIR"],
    ["\\\\?\\C:\\Windows\\win.ini", "PATH_OUTSIDE_WORKDIR"],
    ["\\\\.\\PhysicalDrive0", "PATH_OUTSIDE_WORKDIR"],
    ["CON", "INVALID_NAME"],
    ["nul.txt", "INVALID_NAME"],
    ["sub\\aux", "INVALID_NAME"],
    ["COM1.log", "INVALID_NAME"],
    ["lpt\u00b9", "INVALID_NAME"],
    ["PRN .txt", "INVALID_NAME"],
    ["CONIN$", "INVALID_NAME"],
    ["a.txt:secret", "INVALID_NAME"],
    ["a.txt::$DATA", "INVALID_NAME"],
    ["sub:stream\\deep.md", "INVALID_NAME"],
    ["id_rsa.", "INVALID_NAME"],
    ["id_rsa ", "INVALID_NAME"],
    ["a?.txt", "INVALID_NAME"],
    ["x".repeat(256), "INVALID_NAME"],
    ["ID_RSA", "DENIED_PATH"],
    ["Id_Rsa", "DENIED_PATH"],
    ["sub\\..\\ID_RSA", "DENIED_PATH"],
    ["SERVER.PEM", "DENIED_PATH"],
    [".ENV", "HIDDEN_PATH_NOT_ALLOWED"],
  ];

  test("traversal, drive, UNC, device, stream, trailing-dot and denied spellings are refused on read", async () => {
    const before = snapshot(base);
    const got: Array<[string, string]> = [];
    for (const [p] of REFUSED) got.push([p, errorCode(await call("read_text_file", { workdir: "ro", path: p }))]);
    for (const [p] of REFUSED) got.push([`stat ${p}`, errorCode(await call("stat_file", { workdir: "ro", path: p }))]);
    expect(got).toEqual([...REFUSED, ...REFUSED.map(([p, c]) => [`stat ${p}`, c] as [string, string])]);
    expect(snapshot(base)).toEqual(before);
  });

  test("the same spellings are refused for create, upload and mkdir, and nothing appears on disk", async () => {
    const before = snapshot(base);
    for (const [p, code] of REFUSED) {
      // a denied name in rw is refused the same way as in ro
      expect([p, errorCode(await call("create_text_file", { workdir: "rw", path: p, content: "x" }))]).toEqual([p, code]);
      expect([p, errorCode(await call("upload_binary_file", { workdir: "rw", path: p, data_base64: "AA==" }))]).toEqual([p, code]);
      expect([p, errorCode(await call("create_directory", { workdir: "rw", path: p }))]).toEqual([p, code]);
    }
    expect(snapshot(base)).toEqual(before);
    expect(fs.readFileSync(path.join(base, "outside", "x.txt"), "utf8")).toBe("outside\n");
  });

  test("find and search never reveal a denied or hidden name, whatever its case", async () => {
    fs.writeFileSync(path.join(base, "ro", "sub", "ID_RSA"), "needle in a key\n");
    try {
      const found = ok<{ matches: Array<{ path: string }> }>(await call("find_files", { workdir: "ro", pattern: "**" }));
      expect(found.matches.map((m) => m.path).sort()).toEqual(["a.txt", "pic.png", "sub/deep.md"]);
      const hits = ok<{ matches: Array<{ path: string }> }>(await call("search_text", { workdir: "ro", query: "needle" }));
      expect(hits.matches.map((m) => m.path).sort()).toEqual(["a.txt", "sub/deep.md"]);
    } finally {
      fs.rmSync(path.join(base, "ro", "sub", "ID_RSA"));
    }
  });

  // Unix symlinks committed to the repository (test/platform/fixtures/wine-links): Wine follows
  // them even under FILE_OPEN_REPARSE_POINT, so this proves the backend's own check. A Windows
  // checkout turns them into plain files, so it runs under Wine only.
  test.skipIf(!underWine)("Unix symlinks seen through Wine are SYMLINK_NOT_ALLOWED in any component (Wine lane)", async () => {
    const fixture = WINE_LINKS_FIXTURE;
    const links = await connectWindowsServe("windows-fs-links", ["--workdir", `l=${fixture}`], base);
    const ask = async (name: string, args: Record<string, unknown>) => (await links.callTool({ name, arguments: { workdir: "l", ...args } })) as CallToolResult;
    try {
      expect(errorCode(await ask("read_text_file", { path: "file-link.txt" }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(errorCode(await ask("read_text_file", { path: "dir-link\\b.txt" }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(errorCode(await ask("list_directory", { path: "dir-link" }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(errorCode(await ask("stat_file", { path: "out-link" }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(errorCode(await ask("read_text_file", { path: "out-link/tools.md" }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(ok<{ content: string }>(await ask("read_text_file", { path: "sub/b.txt" })).content).toBe("inside\n");
      // neither link is followed by the walk: each content is found once, under its real name
      for (const [query, where] of [["inside", "sub/b.txt"], ["plain", "a.txt"]] as const) {
        const hits = ok<{ matches: Array<{ path: string }> }>(await ask("search_text", { query }));
        expect(hits.matches.map((m) => m.path)).toEqual([where]);
      }
    } finally {
      await links.close();
    }
  });

  // Wine 8 cannot create a symlink or a junction on its Unix-backed drives (CreateSymbolicLinkW
  // reports success and creates nothing; mklink /J fails), so these need real Windows, elevated or
  // in Developer Mode for the symlinks (the CI runner is an administrator).
  test.skipIf(underWine)("name-surrogates: a final symlink or junction is SYMLINK_NOT_ALLOWED to read or edit and listed as a symlink; a junction on the way is REPARSE_POINT_NOT_ALLOWED (real Windows)", async () => {
    const ro = path.join(base, "ro");
    const rw = path.join(base, "rw");
    const target = path.join(base, "outside", "x.txt");
    const links = [path.join(ro, "jn"), path.join(ro, "fl.txt"), path.join(ro, "dl"), path.join(rw, "edit-link.txt")];
    fs.symlinkSync(path.join(base, "outside"), links[0]!, "junction");
    fs.symlinkSync(target, links[1]!, "file");
    fs.symlinkSync(path.join(base, "outside"), links[2]!, "dir");
    fs.symlinkSync(target, links[3]!, "file");
    try {
      expect(errorCode(await call("read_text_file", { workdir: "ro", path: "jn\\x.txt" }))).toBe("REPARSE_POINT_NOT_ALLOWED");
      expect(errorCode(await call("list_directory", { workdir: "ro", path: "jn" }))).toBe("REPARSE_POINT_NOT_ALLOWED");
      expect(errorCode(await call("create_text_file", { workdir: "rw", path: "..\\ro\\jn\\new.txt", content: "x" }))).toBe("PATH_OUTSIDE_WORKDIR");
      // the link itself: never read as the empty file libuv's fstat makes of it
      for (const p of ["fl.txt", "jn", "dl"]) expect([p, errorCode(await call("read_text_file", { workdir: "ro", path: p }))]).toEqual([p, "SYMLINK_NOT_ALLOWED"]);
      const rev = "v1:0000000000000000";
      expect(errorCode(await call("edit_text_file", { workdir: "rw", path: "edit-link.txt", expected_revision: rev, edits: [{ old_text: "outside", new_text: "changed" }] }))).toBe("SYMLINK_NOT_ALLOWED");
      expect(fs.lstatSync(links[3]!).isSymbolicLink()).toBe(true);
      expect(fs.readFileSync(target, "utf8")).toBe("outside\n");
      const listed = ok<{ entries: Array<{ name: string; type: string }> }>(await call("list_directory", { workdir: "ro" })).entries;
      const types = Object.fromEntries(listed.filter((e) => ["jn", "fl.txt", "dl"].includes(e.name)).map((e) => [e.name, e.type]));
      expect(types).toEqual({ jn: "symlink", "fl.txt": "symlink", dl: "symlink" });
      expect(fs.readdirSync(path.join(base, "outside"))).toEqual(["x.txt"]);
    } finally {
      for (const link of links) fs.rmSync(link, { force: true, recursive: false });
    }
  });

  // A reparse point that is not a name-surrogate is an ordinary file: WOF compression
  // (compact /exe, tag 0x80000017) is the one every Windows can make; OneDrive placeholders and
  // dedup files carry tags of the same kind. Wine has no reparse points at all.
  test.skipIf(underWine)("a WOF-compressed file (non-surrogate reparse point) is served as the file it is (real Windows)", async () => {
    const file = path.join(base, "ro", "wof.txt");
    const text = "compressible line of text\n".repeat(4096);
    fs.writeFileSync(file, text);
    try {
      const compact = spawnSync("compact.exe", ["/c", "/exe:xpress4k", file], { encoding: "utf8" });
      expect(compact.status).toBe(0);
      const query = spawnSync("fsutil.exe", ["reparsepoint", "query", file], { encoding: "utf8" });
      expect(query.stdout).toContain("0x80000017"); // IO_REPARSE_TAG_WOF: the file really is a reparse point
      const read = ok<{ content: string }>(await call("read_text_file", { workdir: "ro", path: "wof.txt" }));
      expect(read.content).toBe(text);
      const listed = ok<{ entries: Array<{ name: string; type: string; size: number | null }> }>(await call("list_directory", { workdir: "ro" })).entries;
      expect(listed.find((e) => e.name === "wof.txt")).toMatchObject({ type: "file", size: text.length });
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  // Wine has no 8.3 names, so the short spelling of a denied name only exists on real Windows, on a
  // volume that generates short names (.github/workflows/windows.yml turns generation on first).
  test.skipIf(underWine)("an 8.3 short name never reaches a denied long name (real Windows)", async () => {
    const file = path.join(base, "ro", "id_ed25519");
    fs.writeFileSync(file, "PRIVATE\n");
    try {
      const short = path.basename(shortPathName(file));
      // no short name means this volume does not generate them: the defence could not be shown
      expect(short).not.toBe("id_ed25519");
      expect(short).toContain("~");
      expect(errorCode(await call("read_text_file", { workdir: "ro", path: short }))).toBe("INVALID_NAME");
      expect(errorCode(await call("stat_file", { workdir: "ro", path: short }))).toBe("INVALID_NAME");
    } finally {
      fs.rmSync(file);
    }
  });
});
