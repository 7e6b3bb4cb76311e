// edit_text_file's dry run and returned diff at the service level, on real files: the exact diff
// text of small edits (LF, CRLF, no final newline, BOM), a dry run that writes nothing (bytes,
// mtime, inode, directory entries) and takes no writer lease but makes every check the edit
// makes, the real edit returning the dry run's diff, and the diff's bounds. Only the window
// between the texts' common prefix and suffix is diffed: generated edits (LF and CRLF, with and
// without a final newline, at the first and last lines, several regions) check that the result is
// still a unified diff of the whole file, line numbers and context included.
import { describe, expect, test } from "bun:test";
import { applyPatch, FILE_HEADERS_ONLY, formatPatch, parsePatch, structuredPatch } from "diff";
import fs from "node:fs";
import path from "node:path";
import { ServerfsError } from "../../src/errors.ts";
import { createFileService, DIFF_MAX_BYTES, type MutationGate } from "../../src/fs/index.ts";
import { expectCode, physical, read, registry, removeTemp, single, workdir, write } from "./helpers.ts";
import { DIFF_MAX_COMPARISONS, DIFF_MAX_WINDOW_BYTES, DIFF_MAX_WINDOW_LINES, editDiff } from "../../src/fs/edit-diff.ts";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

async function setup(content: string | Buffer, name = "notes.txt", over = {}) {
  const s = single(over);
  write(s.root, name, content);
  const rev = (await s.svc.statFile({ workdir: "w", path: name })).revision;
  return { ...s, rev, name };
}

/** Everything a write could change: bytes, inode, mtime and ctime (ns), and the directory's names. */
function disk(root: string, name: string) {
  const st = fs.statSync(path.join(root, name), { bigint: true });
  return { bytes: read(root, name).toString("hex"), ino: st.ino, mtime: st.mtimeNs, ctime: st.ctimeNs, names: physical(path.dirname(path.join(root, name))) };
}

/**
 * What is wrong with `diff` as the unified diff of `a` → `b` with 3 lines of context ([] when
 * nothing): it must apply, every hunk's lines must be the files' lines at exactly its line
 * numbers, and each hunk has 3 lines of context each side unless the file starts or ends first.
 */
function problems(a: string, b: string, diff: string): string[] {
  const out: string[] = [];
  if (applyPatch(a, diff) !== b) out.push("does not apply");
  const lines = (t: string) => t.split(/(?<=\n)/).filter((l) => l !== "").map((l) => l.replace(/\n$/, ""));
  const [A, B] = [lines(a), lines(b)];
  for (const h of parsePatch(diff)[0]!.hunks) {
    let [o, n] = [h.oldStart - 1, h.newStart - 1];
    const body = h.lines.filter((l) => !l.startsWith("\\"));
    for (const l of body) {
      if (l[0] !== "+" && A[o++] !== l.slice(1)) out.push(`old line ${o} is not ${JSON.stringify(l)}`);
      if (l[0] !== "-" && B[n++] !== l.slice(1)) out.push(`new line ${n} is not ${JSON.stringify(l)}`);
    }
    const lead = body.findIndex((l) => l[0] !== " ");
    const trail = [...body].reverse().findIndex((l) => l[0] !== " ");
    if (lead < 3 && h.oldStart - 1 > lead) out.push(`hunk at ${h.oldStart}: ${lead} leading context lines`);
    if (trail < 3 && o < A.length) out.push(`hunk at ${h.oldStart}: ${trail} trailing context lines`);
  }
  return out;
}

/** jsdiff's diff of the whole texts, as editDiff formats it. */
const wholeFileDiff = (a: string, b: string) => formatPatch(structuredPatch("f", "f", a, b, undefined, undefined, { context: 3 }), FILE_HEADERS_ONLY);

describe("only the changed window is diffed, and the result is a diff of the whole file", () => {
  test("edge cases: the same text as jsdiff's diff of the whole file", () => {
    const cases: [string, string][] = [
      ["", "x\n"],
      ["x\n", ""],
      ["x", "x\n"],
      ["x\n", "x"],
      ["ab\n", "b\n"], // the common suffix starts inside a line
      ["a\nb\n", "a\nX\nb\n"], // a pure insertion: the old side of the window is only context
      ["a\nb\nc\n", "a\nc\n"],
      ["l1\r\nl2\r\nl3\r\nl4\r\nl5\r\nl6\r\nl7\r\nl8", "l1\r\nl2\r\nl3\r\nL4\r\nl5\r\nl6\r\nl7\r\nl8"],
      ["first\n2\n3\n4\n5\n6\n", "FIRST\n2\n3\n4\n5\n6\n"],
      ["1\n2\n3\n4\n5\nlast", "1\n2\n3\n4\n5\nLAST"],
      ["1\n2\n3\n4\n5\nlast\n", "1\n2\n3\n4\n5\nlast\nmore"],
      ["日本\n語\n", "日本\n語!\n"],
    ];
    for (const [a, b] of cases) {
      const d = editDiff("f", a, b);
      expect([a, b, d.diff, d.diff_truncated]).toEqual([a, b, wholeFileDiff(a, b), false]);
      expect(problems(a, b, d.diff)).toEqual([]);
    }
  });

  test("3000 generated edits (LF, CRLF, final newline or not, first and last lines, up to 4 places): every diff is right", () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    let checked = 0;
    for (let n = 0; n < 3000; n++) {
      const eol = random() < 0.3 ? "\r\n" : "\n";
      const final = random() < 0.7;
      const text = (ls: string[], fin: boolean) => ls.join(eol) + (fin && ls.length > 0 ? eol : "");
      const lines = Array.from({ length: Math.floor(random() * 30) }, () => pick(["a", "b", "c", "", "dd"]));
      const edited = [...lines];
      for (let k = 1 + Math.floor(random() * 4); k > 0; k--) {
        const at = pick([0, edited.length - 1, edited.length, Math.floor(random() * (edited.length + 1))]);
        const op = random();
        if (op < 0.33) edited.splice(at, 0, pick(["a", "x", "b"]));
        else if (op < 0.66) edited.splice(at, 1);
        else edited[Math.max(0, at)] = pick(["y", "a", ""]);
      }
      const [a, b] = [text(lines, final), text(edited, random() < 0.2 ? !final : final)];
      const d = editDiff("f", a, b);
      if (a === b) {
        expect(d).toEqual({ diff: "", diff_truncated: false });
        continue;
      }
      expect(d.diff_truncated).toBe(false);
      expect([a, b, problems(a, b, d.diff)]).toEqual([a, b, []]);
      checked++;
    }
    expect(checked).toBeGreaterThan(2500);
  });
});

describe("the diff text", () => {
  const cases: [string, string | Buffer, { old_text: string; new_text: string; expected_count?: number }[], string][] = [
    ["LF", "a\nb\nc\n", [{ old_text: "b", new_text: "B" }], "--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"],
    [
      "CRLF without a final newline",
      "a\r\nb\r\nc",
      [{ old_text: "b", new_text: "B" }],
      "--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\n\\ No newline at end of file\n",
    ],
    [
      "the last line without a final newline",
      "x\ny",
      [{ old_text: "y", new_text: "z" }],
      "--- notes.txt\n+++ notes.txt\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n",
    ],
    ["adding the final newline", "x\ny", [{ old_text: "y", new_text: "y\n" }], "--- notes.txt\n+++ notes.txt\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n"],
    ["BOM never shown", Buffer.concat([BOM, Buffer.from("hello\n")]), [{ old_text: "hello", new_text: "bye" }], "--- notes.txt\n+++ notes.txt\n@@ -1,1 +1,1 @@\n-hello\n+bye\n"],
    [
      "two edits, two hunks, 3 lines of context",
      Array.from({ length: 20 }, (_, i) => `l${i}\n`).join(""),
      [
        { old_text: "l2\n", new_text: "two\n" },
        { old_text: "l15\n", new_text: "" },
      ],
      "--- notes.txt\n+++ notes.txt\n@@ -1,6 +1,6 @@\n l0\n l1\n-l2\n+two\n l3\n l4\n l5\n@@ -13,7 +13,6 @@\n l12\n l13\n l14\n-l15\n l16\n l17\n l18\n",
    ],
    ["no change at all", "same\n", [{ old_text: "same", new_text: "same" }], ""],
  ];
  for (const [what, content, edits, diff] of cases) {
    test(`${what}: dry run and real edit return the same exact diff`, async () => {
      const { svc, root, rev, name, base } = await setup(content);
      const before = disk(root, name);
      const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
      expect(dry).toMatchObject({ edited: false, dry_run: true, revision_before: rev, revision: rev, diff, diff_truncated: false });
      expect(disk(root, name)).toEqual(before);
      const real = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
      expect(real).toMatchObject({ edited: true, dry_run: false, revision_before: rev, diff, diff_truncated: false, bytes_after: dry.bytes_after, bytes_before: dry.bytes_before });
      expect(read(root, name).length).toBe(real.bytes_after);
      expect((await svc.statFile({ workdir: "w", path: name })).revision).toBe(real.revision);
      svc.close();
      removeTemp(base);
    });
  }

  test("labels are the caller's workdir-relative path, normalised, never a host path; odd names are quoted", async () => {
    const { svc, root, base } = single();
    write(root, "dir/sub/n.txt", "a\n");
    write(root, "dir/café.txt", "a\n");
    const rev = (await svc.statFile({ workdir: "w", path: "dir/sub/n.txt" })).revision;
    const r = await svc.editTextFile({ workdir: "w", path: "./dir/x/../sub//n.txt", expected_revision: rev, edits: [{ old_text: "a", new_text: "b" }], dry_run: true });
    expect(r.diff.split("\n").slice(0, 2)).toEqual(["--- dir/sub/n.txt", "+++ dir/sub/n.txt"]);
    expect(r.diff).not.toContain(base);
    const rev2 = (await svc.statFile({ workdir: "w", path: "dir/café.txt" })).revision;
    const q = await svc.editTextFile({ workdir: "w", path: "dir/café.txt", expected_revision: rev2, edits: [{ old_text: "a", new_text: "b" }], dry_run: true });
    expect(q.diff.split("\n")[0]).toBe('--- "dir/caf\\303\\251.txt"');
    svc.close();
    removeTemp(base);
  });
});

describe("a dry run writes nothing and refuses what the edit would refuse", () => {
  test("stale revision, missing text, policy, read-only workdir, hard links: the same codes, nothing changes", async () => {
    const { svc, root, rev, name, base } = await setup("one two\n");
    const before = disk(root, name);
    const dry = (over: object) => svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits: [{ old_text: "one", new_text: "1" }], dry_run: true, ...over });
    await expectCode(dry({ expected_revision: "v1:0000000000000000" }), "REVISION_CONFLICT");
    await expectCode(dry({ edits: [{ old_text: "three", new_text: "3" }] }), "EDIT_CONFLICT");
    await expectCode(dry({ edits: [{ old_text: "o", new_text: "0", expected_count: 1 }] }), "EDIT_CONFLICT");
    await expectCode(dry({ path: "../x.txt" }), "PATH_OUTSIDE_WORKDIR");
    write(root, ".env", "K=1\n");
    await expectCode(dry({ path: ".env" }), "HIDDEN_PATH_NOT_ALLOWED");
    await expectCode(dry({ path: "notes.txt/" }), "INVALID_PATH");
    await expectCode(dry({ dry_run: "yes" }), "INVALID_ARGUMENT");
    fs.symlinkSync(name, path.join(root, "link.txt"));
    await expectCode(dry({ path: "link.txt" }), "SYMLINK_NOT_ALLOWED");
    fs.linkSync(path.join(root, name), path.join(root, "hard.txt"));
    const linked = (await svc.statFile({ workdir: "w", path: name })).revision; // the link count is part of it
    await expectCode(dry({ expected_revision: linked }), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
    fs.unlinkSync(path.join(root, "hard.txt"));
    fs.unlinkSync(path.join(root, "link.txt"));
    fs.unlinkSync(path.join(root, ".env"));
    const after = disk(root, name);
    expect({ ...after, ctime: 0n }).toEqual({ ...before, ctime: 0n }); // the hard link itself touched ctime
    const ro = createFileService(registry([workdir("w", root, { read_only: true })]));
    await expectCode(ro.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits: [{ old_text: "one", new_text: "1" }], dry_run: true }), "WORKDIR_READ_ONLY");
    ro.close();
    svc.close();
    removeTemp(base);
  });

  test("a dry run neither waits for nor takes the writer lease; the edit does", async () => {
    const base = single();
    write(base.root, "f.txt", "x\n");
    let runs = 0;
    const busy: MutationGate = {
      run() {
        runs++;
        return Promise.reject(new ServerfsError("WORKDIR_BUSY", "w:f.txt — held by a task"));
      },
    };
    const svc = createFileService(registry([workdir("w", base.root)]), { gate: busy });
    const rev = (await svc.statFile({ workdir: "w", path: "f.txt" })).revision;
    const edits = [{ old_text: "x", new_text: "y" }];
    const dry = await svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits, dry_run: true });
    expect(dry.diff).toBe("--- f.txt\n+++ f.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n");
    expect(runs).toBe(0);
    await expectCode(svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits }), "WORKDIR_BUSY");
    expect(runs).toBe(1);
    expect(read(base.root, "f.txt").toString()).toBe("x\n");
    svc.close();
    base.svc.close();
    removeTemp(base.base);
  });
});

describe("diff bounds (all on sizes and counts: the same edit always gets the same diff)", () => {
  test(`hunks beyond ${DIFF_MAX_BYTES} bytes are left out whole: diff_truncated, and what is kept still applies`, async () => {
    // 180 changed lines 10 lines apart: 180 separate hunks of ~250 bytes
    const lines = Array.from({ length: 1800 }, (_, i) => (i % 10 === 5 ? `MARK line ${i} ${"p".repeat(40)}\n` : `plain line ${i} ${"q".repeat(20)}\n`));
    const { svc, root, rev, name, base } = await setup(lines.join(""));
    const edits = [{ old_text: "MARK", new_text: "DONE", expected_count: 180 }];
    const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
    expect(dry.diff_truncated).toBe(true);
    expect(Buffer.byteLength(dry.diff)).toBeLessThanOrEqual(DIFF_MAX_BYTES);
    expect(Buffer.byteLength(dry.diff)).toBeGreaterThan(DIFF_MAX_BYTES - 400);
    const [patch] = parsePatch(dry.diff);
    expect(patch!.hunks.length).toBeGreaterThan(50);
    expect(patch!.hunks.length).toBeLessThan(180);
    // every kept hunk is whole: applied to the old text it gives the new text up to the last hunk
    const applied = applyPatch(lines.join(""), dry.diff);
    expect(typeof applied).toBe("string");
    const lastLine = (patch!.hunks.at(-1)!.oldStart as number) + 6;
    const expected = lines.map((l, i) => (i < lastLine ? l.replace("MARK", "DONE") : l)).join("");
    expect(applied).toBe(expected);
    const real = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
    expect([real.diff, real.diff_truncated]).toEqual([dry.diff, true]);
    expect(read(root, name).toString()).toBe(lines.join("").replaceAll("MARK", "DONE"));
    svc.close();
    removeTemp(base);
  });

  test("more than 1000 line insertions and deletions: the diff keeps only its headers, and the edit itself still applies in full", async () => {
    const text = Array.from({ length: 1500 }, (_, i) => `v${i} = old\n`).join("");
    const { svc, root, rev, name, base } = await setup(text);
    const edits = [{ old_text: "old", new_text: "new", expected_count: 1500 }];
    const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
    expect([dry.diff, dry.diff_truncated]).toEqual(["--- notes.txt\n+++ notes.txt\n", true]);
    const real = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
    expect([real.diff, real.diff_truncated, real.edited]).toEqual(["--- notes.txt\n+++ notes.txt\n", true, true]);
    expect(read(root, name).toString()).toBe(text.replaceAll("old", "new"));
    svc.close();
    removeTemp(base);
  });

  test("a one-line edit of a 1 MiB file of short lines: only its window is diffed, at the file's line numbers", async () => {
    const lines = Array.from({ length: (1024 * 1024) / 8 - 1 }, (_, i) => `l${String(i).padStart(6, "0")}\n`);
    const { svc, root, rev, name, base } = await setup(lines.join(""));
    const edits = [{ old_text: "l070000\n", new_text: "changed\n" }];
    const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
    const diff = "--- notes.txt\n+++ notes.txt\n@@ -69998,7 +69998,7 @@\n l069997\n l069998\n l069999\n-l070000\n+changed\n l070001\n l070002\n l070003\n";
    expect([dry.diff, dry.diff_truncated]).toEqual([diff, false]);
    const real = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
    expect([real.diff, real.diff_truncated]).toEqual([diff, false]);
    expect(read(root, name).toString()).toBe(lines.join("").replace("l070000\n", "changed\n"));
    svc.close();
    removeTemp(base);
  });

  test(`far-apart edits: a window of ${DIFF_MAX_WINDOW_LINES} lines (old and new) is diffed, one line more gives headers only`, async () => {
    const lines = Array.from({ length: 30_000 }, (_, i) => `row ${i}\n`);
    const { svc, root, base } = single();
    // rows 0 and k - 1 change: the window is rows 0 .. k + 2 on each side
    for (const [k, truncated] of [[DIFF_MAX_WINDOW_LINES / 2 - 3, false], [DIFF_MAX_WINDOW_LINES / 2 - 2, true]] as const) {
      const name = `far-${k}.txt`;
      write(root, name, lines.join(""));
      const rev = (await svc.statFile({ workdir: "w", path: name })).revision;
      const edits = [
        { old_text: "row 0\n", new_text: "first\n" },
        { old_text: `row ${k - 1}\n`, new_text: "last\n" },
      ];
      const after = lines.map((l, i) => (i === 0 ? "first\n" : i === k - 1 ? "last\n" : l)).join("");
      const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
      expect(dry.diff_truncated).toBe(truncated);
      if (truncated) expect(dry.diff).toBe(`--- ${name}\n+++ ${name}\n`);
      else {
        expect(parsePatch(dry.diff)[0]!.hunks.map((h) => [h.oldStart, h.oldLines, h.newStart, h.newLines])).toEqual([[1, 4, 1, 4], [k - 3, 7, k - 3, 7]]);
        expect(problems(lines.join(""), after, dry.diff)).toEqual([]);
      }
      await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
      expect(read(root, name).toString()).toBe(after);
    }
    svc.close();
    removeTemp(base);
  });

  test(`a window of ${DIFF_MAX_WINDOW_BYTES} bytes (old and new) is diffed, one byte more gives headers only`, async () => {
    const { svc, root, base } = single();
    // two changed short lines with one long unchanged line between them, out of the hunks' context
    const short = "s0\ns1\ns2\ns3\n";
    const windowOf = (long: string) => `s1\ns2\ns3\nCHANGE-1\n${short}${long}${short}CHANGE-2\ns0\ns1\ns2\n`;
    const long = `${"L".repeat(DIFF_MAX_WINDOW_BYTES / 2 - Buffer.byteLength(windowOf("")) - 1)}\n`;
    expect(Buffer.byteLength(windowOf(long)) * 2).toBe(DIFF_MAX_WINDOW_BYTES);
    const text = `head\n${short}CHANGE-1\n${short}${long}${short}CHANGE-2\n${short}tail\n`;
    // the same length on the new side, or one byte more
    for (const [replacement, truncated] of [["DONE-001", false], ["DONE-0001", true]] as const) {
      const name = `wide-${replacement}.txt`;
      write(root, name, text);
      const rev = (await svc.statFile({ workdir: "w", path: name })).revision;
      const edits = [
        { old_text: "CHANGE-1", new_text: replacement },
        { old_text: "CHANGE-2", new_text: "DONE-002" },
      ];
      const after = text.replace("CHANGE-1", replacement).replace("CHANGE-2", "DONE-002");
      const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
      expect(dry.diff_truncated).toBe(truncated);
      if (truncated) expect(dry.diff).toBe(`--- ${name}\n+++ ${name}\n`);
      else {
        expect(parsePatch(dry.diff)[0]!.hunks.map((h) => [h.oldStart, h.oldLines])).toEqual([[3, 7], [13, 7]]);
        expect(problems(text, after, dry.diff)).toEqual([]);
      }
      await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
      expect(read(root, name).toString()).toBe(after);
    }
    svc.close();
    removeTemp(base);
  });

  test("replace-all over thousands of lines: 150 changed lines of 3000, one diff of the whole file", async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => (i % 20 === 3 ? `k${i} = old\n` : `k${i}\n`));
    const { svc, root, rev, name, base } = await setup(lines.join(""));
    const edits = [{ old_text: "old", new_text: "new", expected_count: 150 }];
    const after = lines.join("").replaceAll("old", "new");
    const dry = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits, dry_run: true });
    expect(dry.diff_truncated).toBe(false);
    expect(parsePatch(dry.diff)[0]!.hunks.length).toBe(150);
    expect(problems(lines.join(""), after, dry.diff)).toEqual([]);
    const real = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits });
    expect([real.diff, real.diff_truncated]).toEqual([dry.diff, false]);
    expect(read(root, name).toString()).toBe(after);
    svc.close();
    removeTemp(base);
  });

  test(`past ${DIFF_MAX_COMPARISONS} line comparisons the diff keeps only its headers (many changes among few distinct lines)`, () => {
    // 3000 lines of a 3-line alphabet, every 50th or every 20th replaced: 120 or 300 insertions
    // and deletions (under the 1000 bound), a window of 6000 lines (under its bound); ~67 000
    // and ~176 000 comparisons
    const lines = Array.from({ length: 3000 }, (_, i) => `l${i % 3}\n`);
    const replaced = (count: number) => {
      const step = Math.floor(3000 / count);
      return lines.map((l, i) => (i % step === 0 && i / step < count ? "X\n" : l)).join("");
    };
    const under = editDiff("f", lines.join(""), replaced(60));
    expect(under.diff_truncated).toBe(false);
    expect(problems(lines.join(""), replaced(60), under.diff)).toEqual([]);
    expect(editDiff("f", lines.join(""), replaced(150))).toEqual({ diff: "--- f\n+++ f\n", diff_truncated: true });
  });

  test("one hunk larger than the cap: headers only", async () => {
    const { svc, rev, name, base } = await setup("start\nend\n");
    const big = Array.from({ length: 900 }, (_, i) => `inserted line number ${i} ${"z".repeat(30)}`).join("\n");
    const r = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits: [{ old_text: "start\n", new_text: `start\n${big}\n` }], dry_run: true });
    expect([r.diff, r.diff_truncated]).toEqual(["--- notes.txt\n+++ notes.txt\n", true]);
    svc.close();
    removeTemp(base);
  });
});
