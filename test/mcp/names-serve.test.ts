// Names that draw, through a real `serverfs serve` (from source, or the executable
// SERVERFS_TEST_SERVE_BIN names: .ci/run's compiled-binary lane). A file name holding newlines
// once drew fake entries in directory_tree's text (a denied `id_rsa` that does not exist); every
// text block now shows such characters as escapes, while structuredContent keeps the raw names.
// The tree and a listing are written in the same write as a search that folds megabytes of long
// non-ASCII lines case-insensitively, and are answered before it: that search is slow by
// construction (it scans every byte, giving the event loop back as it goes), the tree and the list
// need one directory read each. Nothing on disk changes; in the compiled lane peak RSS stays at
// or below 120 MB and RSS returns to within 20 MB of idle 2 s after the last answer.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectServeMemory, FrameServe } from "../support/frame-serve.ts";
import { isLinux } from "../support/proc.ts";
import { removeDir, tempDir } from "../support/temp.ts";
import { treeSnapshot } from "../support/tree.ts";

// a ceiling for a loaded 2-core machine, not a timing assertion
setDefaultTimeout(240_000);

const MB = 1024 * 1024;
const FAKE = "notes\n  id_rsa  0 B\n  secrets.env  12 B";
const NAMES = [FAKE, "\x1b[2Jcleared", "invoice\u202egnp.exe", "nel\x85x", "日本語.md"];
const RAW_DRAWING = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

const call = (id: string, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

describe.skipIf(!isLinux)("names that draw, through real serve (Linux: such names, and memory from /proc)", () => {
  let base = "";
  let workdir = "";
  let config = "";
  beforeAll(() => {
    base = tempDir("sfs-names-");
    workdir = path.join(base, "w");
    fs.mkdirSync(path.join(workdir, "docs"), { recursive: true });
    for (const n of NAMES) fs.writeFileSync(path.join(workdir, "docs", n), "needle\n");
    // ~12 MB of long non-ASCII lines for the slow search
    const unit = `${"ÄÖÜ".repeat(100)}${"x".repeat(700)}${"y".repeat(24)}`;
    const line = Buffer.from(`${unit.repeat(40)}\n`);
    const file = Buffer.concat(Array.from({ length: Math.ceil((4 * MB) / line.length) }, () => line));
    for (let i = 0; i < 3; i++) fs.writeFileSync(path.join(workdir, `slow-${i}.txt`), file);
    config = path.join(base, "serverfs.toml");
    fs.writeFileSync(config, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(workdir)}\n`);
  }, 60_000);
  afterAll(() => removeDir(base));

  test("directory_tree and list_directory text escape every drawing name, answered before a slow search", async () => {
    const before = treeSnapshot(workdir);
    const s = new FrameServe(config, base);
    await s.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "names", version: "0" } } }, { jsonrpc: "2.0", method: "notifications/initialized" });
    await s.reply("init");
    await s.send(call("warm", "stat_file", { workdir: "w", path: "docs" }));
    await s.reply("warm");
    const idle = s.status("VmRSS");
    await s.send(
      call("slow", "search_text", { workdir: "w", query: "NO SUCH NEEDLE", case_sensitive: false, glob: "slow-*.txt" }),
      call("tree", "directory_tree", { workdir: "w", path: "docs" }),
      call("list", "list_directory", { workdir: "w", path: "docs" }),
      call("missing", "read_text_file", { workdir: "w", path: "gone\n  id_rsa\u202e" }),
    );
    const tree = await s.reply("tree");
    const list = await s.reply("list");
    const missing = await s.reply("missing");
    const slow = await s.reply("slow");
    for (const id of ["tree", "list", "missing"]) expect(s.position(id)).toBeLessThan(s.position("slow"));
    expect(slow.result?.structuredContent).toEqual({ matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 });

    const treeText = tree.result!.content![0]!.text!;
    const lines = treeText.split("\n");
    for (const l of lines) expect(l).not.toMatch(RAW_DRAWING);
    // the root, one line per entry, the footer: no name adds a line
    expect(lines.length).toBe(NAMES.length + 2);
    expect(lines).not.toContain("  id_rsa  0 B");
    expect(lines).toContain("  notes\\x0a  id_rsa  0 B\\x0a  secrets.env  12 B  7 B");
    expect(lines).toContain("  \\x1b[2Jcleared  7 B");
    expect(lines).toContain("  invoice\\u{202e}gnp.exe  7 B");
    expect(lines).toContain("  nel\\x85x  7 B");
    expect(lines).toContain("  日本語.md  7 B");
    const raw = (tree.result!.structuredContent as { tree: { children: { name: string }[] } }).tree.children.map((c) => c.name);
    expect(raw.sort()).toEqual([...NAMES].sort());

    for (const c of list.result!.content!) expect(c.text ?? "").not.toMatch(RAW_DRAWING);
    expect((list.result!.structuredContent as { entries: { name: string }[] }).entries.map((e) => e.name).sort()).toEqual([...NAMES].sort());

    expect(missing.result?.isError).toBe(true);
    expect(missing.result?.content?.map((c) => c.text)).toEqual(["PATH_NOT_FOUND: w:gone\\x0a  id_rsa\\u{202e} — does not exist"]);

    await expectServeMemory(s, idle);
    await s.close();
    expect(treeSnapshot(workdir)).toEqual(before);
  });
});
