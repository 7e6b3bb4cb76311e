// edit_text_file's dry run and returned diff at the service level, on real files: the exact diff
// text of small edits (LF, CRLF, no final newline, BOM), a dry run that writes nothing (bytes,
// mtime, inode, directory entries) and takes no writer lease but makes every check the edit
// makes, the real edit returning the dry run's diff, and both diff bounds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { applyPatch, parsePatch } from "diff";
import fs from "node:fs";
import path from "node:path";
import { ServerfsError } from "../../src/errors.ts";
import { createFileService, DIFF_MAX_BYTES, type MutationGate } from "../../src/fs/index.ts";
import { expectCode, physical, read, registry, removeTemp, single, workdir, write } from "./helpers.ts";
import { DIFF_TIMEOUT_MS, diffTiming } from "../../src/fs/edit-diff.ts";

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

describe("diff bounds", () => {
  // This proves the byte bound; the time bound must not decide it on a loaded machine.
  beforeAll(() => {
    diffTiming.timeoutMs = 60_000;
  });
  afterAll(() => {
    diffTiming.timeoutMs = DIFF_TIMEOUT_MS;
  });
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

  test("one hunk larger than the cap: headers only", async () => {
    const { svc, rev, name, base } = await setup("start\nend\n");
    const big = Array.from({ length: 900 }, (_, i) => `inserted line number ${i} ${"z".repeat(30)}`).join("\n");
    const r = await svc.editTextFile({ workdir: "w", path: name, expected_revision: rev, edits: [{ old_text: "start\n", new_text: `start\n${big}\n` }], dry_run: true });
    expect([r.diff, r.diff_truncated]).toEqual(["--- notes.txt\n+++ notes.txt\n", true]);
    svc.close();
    removeTemp(base);
  });
});
