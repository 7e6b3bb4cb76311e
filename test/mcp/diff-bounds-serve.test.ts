// edit_text_file's diff through a real `serverfs serve` (from source, or the executable
// SERVERFS_TEST_SERVE_BIN names: .ci/run's compiled-binary lane). Once, a one-line dry run of a
// 1 MiB file of short lines made jsdiff split and rebuild both whole texts: ~0.6 s of the event
// loop and a 190 MB peak. Now only the changed window is diffed, within bounds on its size, its
// edit length and its count of line comparisons, and after every request already read is
// answered. The order is shown by construction: a second edit, a dry run of a small file written
// in the same write behind the big one, is answered first. Both run the same steps up to their
// diffs, none of which waits on anything; the big diff gives the event loop back before it runs,
// the tiny one does not (without that yield the big one, read first, answers first). Each case asserts the exact answer,
// that a dry run changes nothing on disk and that a real edit writes exactly the expected bytes.
// In the compiled lane (the 120 MB promise is the executable's, not `bun src/cli.ts`'s) peak RSS
// stays at or below 120 MB and RSS is back within 20 MB of idle 2 s after the last answer; the
// default suite asserts no memory figures.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { applyPatch, parsePatch } from "diff";
import fs from "node:fs";
import path from "node:path";
import { expectServeMemory, FrameServe as Serve } from "../support/frame-serve.ts";
import { isLinux } from "../support/proc.ts";
import { removeDir, tempDir } from "../support/temp.ts";
import { treeSnapshot } from "../support/tree.ts";

const MiB = 1024 * 1024;
// a ceiling for a loaded 2-core machine, not a timing assertion
setDefaultTimeout(120_000);

/** Just under 1 MiB (max_write_bytes) of 8-byte lines: `l000000` … `l131070`. */
const SHORT = Array.from({ length: MiB / 8 - 1 }, (_, i) => `l${String(i).padStart(6, "0")}\n`);
/** The edit of the reviewer's report: one line in the middle. */
const ONE_LINE = [{ old_text: "l070000\n", new_text: "changed\n" }];
const ONE_LINE_DIFF = "--- short.txt\n+++ short.txt\n@@ -69998,7 +69998,7 @@\n l069997\n l069998\n l069999\n-l070000\n+changed\n l070001\n l070002\n l070003\n";
const headersOnly = (p: string) => ({ diff: `--- ${p}\n+++ ${p}\n`, diff_truncated: true });

type Edit = { old_text: string; new_text: string; expected_count?: number };

describe.skipIf(!isLinux)("edit_text_file diffs through real serve (Linux: memory from /proc)", () => {
  let base = "";
  let config = "";
  beforeAll(() => {
    base = tempDir("sfs-diff-bounds-");
    config = path.join(base, "serverfs.toml");
  });
  afterAll(() => removeDir(base));

  /** A fresh workdir holding `files`, serve on it with its connection open: the idle state. */
  async function open(name: string, files: Record<string, string>): Promise<{ s: Serve; idle: number; dir: string }> {
    const dir = path.join(base, name);
    fs.mkdirSync(dir);
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
    fs.writeFileSync(config, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(dir)}\nread_only = false\n`);
    const s = new Serve(config, base);
    await s.send({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "diff-bounds", version: "0" } } }, { jsonrpc: "2.0", method: "notifications/initialized" });
    await s.reply("init");
    await s.send(call("warm", "list_workdirs", {}));
    await s.reply("warm");
    return { s, idle: s.status("VmRSS"), dir };
  }

  const call = (id: string, name: string, args: object) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

  async function revision(s: Serve, p: string): Promise<string> {
    await s.send(call(`rev-${p}`, "stat_file", { workdir: "w", path: p }));
    return (await s.reply(`rev-${p}`)).result?.structuredContent?.revision as string;
  }

  const SMALL_DIFF = "--- small.txt\n+++ small.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n";

  /**
   * The edit and, behind it in the same write, a dry run of a one-line edit of small.txt: that
   * one must be answered first, with its diff. Returns the edit's structured result.
   */
  async function editBehindSmall(s: Serve, p: string, edits: Edit[], dryRun: boolean): Promise<Record<string, unknown>> {
    const rev = await revision(s, p);
    const small = await revision(s, "small.txt");
    const id = `edit-${p}-${s.replies.length}`;
    const edit = call(id, "edit_text_file", { workdir: "w", path: p, expected_revision: rev, edits, dry_run: dryRun });
    await s.send(edit, call(`${id}-small`, "edit_text_file", { workdir: "w", path: "small.txt", expected_revision: small, edits: [{ old_text: "x", new_text: "y" }], dry_run: true }));
    const answer = await s.reply(id);
    const second = await s.reply(`${id}-small`);
    expect(second.result?.structuredContent?.diff).toBe(SMALL_DIFF);
    expect([s.position(`${id}-small`) < s.position(id), s.position(`${id}-small`) >= 0]).toEqual([true, true]);
    expect(answer.result?.isError).toBeFalsy();
    return answer.result!.structuredContent!;
  }

  test("the reviewer's case: a one-line edit of a 1 MiB file of short lines, dry run then real", async () => {
    const { s, idle, dir } = await open("one-line", { "short.txt": SHORT.join(""), "small.txt": "x\n" });
    const before = treeSnapshot(dir);
    const dry = await editBehindSmall(s, "short.txt", ONE_LINE, true);
    expect({ diff: dry.diff, diff_truncated: dry.diff_truncated, edited: dry.edited }).toEqual({ diff: ONE_LINE_DIFF, diff_truncated: false, edited: false });
    expect(treeSnapshot(dir)).toEqual(before);
    const real = await editBehindSmall(s, "short.txt", ONE_LINE, false);
    expect({ diff: real.diff, diff_truncated: real.diff_truncated, edited: real.edited }).toEqual({ diff: ONE_LINE_DIFF, diff_truncated: false, edited: true });
    expect(fs.readFileSync(path.join(dir, "short.txt"), "utf8")).toBe(SHORT.join("").replace("l070000\n", "changed\n"));
    expect(fs.readFileSync(path.join(dir, "small.txt"), "utf8")).toBe("x\n");
    await expectServeMemory(s, idle);
    await s.close();
  });

  test("the worst edits inside and just past the bounds: exact answers, nothing changed by dry runs", async () => {
    // 499 lines marked among 10 000 of the 1 MiB file: 998 insertions and deletions (the bound is
    // 1000) in a window of ~20 000 lines (its bound), past the comparison bound
    const mark = (count: number, step: number) => SHORT.map((l, i) => (i >= 50_000 && (i - 50_000) % step === 0 && (i - 50_000) / step < count ? `M${l.slice(1)}` : l)).join("");
    const marked = mark(499, 20);
    // 210 lines, one every 47: a window of ~19 700 lines just under the comparison bound, diffed
    const under = mark(210, 47);
    // long lines: a window of exactly 1 MiB (old and new sides), two short changed lines
    const short4 = "s0\ns1\ns2\ns3\n";
    const windowOf = (long: string) => `s1\ns2\ns3\nCHANGE-1\n${short4}${long}${short4}CHANGE-2\ns0\ns1\ns2\n`;
    const long = `${"L".repeat(MiB / 2 - Buffer.byteLength(windowOf("")) - 1)}\n`;
    const wide = `head\n${short4}CHANGE-1\n${short4}${long}${short4}CHANGE-2\n${short4}tail\n`;
    const { s, idle, dir } = await open("worst", { "short.txt": SHORT.join(""), "marked.txt": marked, "under.txt": under, "wide.txt": wide, "small.txt": "x\n" });
    const before = treeSnapshot(dir);
    const pick = (r: Record<string, unknown>) => ({ diff: r.diff, diff_truncated: r.diff_truncated });

    const underDiff = pick(await editBehindSmall(s, "under.txt", [{ old_text: "M", new_text: "m", expected_count: 210 }], true));
    expect(underDiff.diff_truncated).toBe(false);
    expect(parsePatch(underDiff.diff as string)[0]!.hunks.length).toBe(210);
    expect(applyPatch(under, underDiff.diff as string)).toBe(under.replaceAll("M", "m"));
    // past the comparison bound: headers only
    expect(pick(await editBehindSmall(s, "marked.txt", [{ old_text: "M", new_text: "m", expected_count: 499 }], true))).toEqual(headersOnly("marked.txt"));
    // replace-all over every line of the 1 MiB file: the window is the whole file, headers only
    expect(pick(await editBehindSmall(s, "short.txt", [{ old_text: "l", new_text: "L", expected_count: SHORT.length }], true))).toEqual(headersOnly("short.txt"));
    // the first and the last line: a window of the whole file, headers only
    const ends = [
      { old_text: "l000000\n", new_text: "first\n" },
      { old_text: "l131070\n", new_text: "last\n" },
    ];
    expect(pick(await editBehindSmall(s, "short.txt", ends, true))).toEqual(headersOnly("short.txt"));
    // the 1 MiB window of long lines is diffed: two small hunks
    const wideEdits = [
      { old_text: "CHANGE-1", new_text: "DONE-001" },
      { old_text: "CHANGE-2", new_text: "DONE-002" },
    ];
    const wideDiff = "--- wide.txt\n+++ wide.txt\n@@ -3,7 +3,7 @@\n s1\n s2\n s3\n-CHANGE-1\n+DONE-001\n s0\n s1\n s2\n@@ -13,7 +13,7 @@\n s1\n s2\n s3\n-CHANGE-2\n+DONE-002\n s0\n s1\n s2\n";
    expect(pick(await editBehindSmall(s, "wide.txt", wideEdits, true))).toEqual({ diff: wideDiff, diff_truncated: false });
    expect(treeSnapshot(dir)).toEqual(before);

    // and for real: the same answers, exactly the expected bytes
    expect(pick(await editBehindSmall(s, "wide.txt", wideEdits, false))).toEqual({ diff: wideDiff, diff_truncated: false });
    expect(fs.readFileSync(path.join(dir, "wide.txt"), "utf8")).toBe(wide.replace("CHANGE-1", "DONE-001").replace("CHANGE-2", "DONE-002"));
    expect(pick(await editBehindSmall(s, "marked.txt", [{ old_text: "M", new_text: "m", expected_count: 499 }], false))).toEqual(headersOnly("marked.txt"));
    expect(fs.readFileSync(path.join(dir, "marked.txt"), "utf8")).toBe(marked.replaceAll("M", "m"));
    expect(fs.readFileSync(path.join(dir, "short.txt"), "utf8")).toBe(SHORT.join(""));
    await expectServeMemory(s, idle);
    await s.close();
  });
});
