// No amplification: an edit whose text would outgrow max_write_bytes at any step is refused from
// the request's own numbers (Σ expected_count × (bytes(new) − bytes(old)), BOM included) before
// anything is built, and a long but legal edit leaves the event loop free for other requests.
// Every refusal leaves the file byte-for-byte, mode and inode unchanged, with no temp file.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { TextEdit } from "../../src/fs/index.ts";
import { snapshot } from "./disk-snapshot.ts";
import { withFastClock } from "./fast-clock.ts";
import { expectCode, physical, single, write } from "./helpers.ts";

async function setup(content: string | Buffer, over: Parameters<typeof single>[0] = {}) {
  const s = single(over);
  write(s.root, "f.txt", content);
  const rev = (await s.svc.statFile({ workdir: "w", path: "f.txt" })).revision;
  return { ...s, rev };
}

async function refusedUnchanged(content: string | Buffer, edits: TextEdit[], code: "WRITE_TOO_LARGE" | "EDIT_CONFLICT", over = {}): Promise<void> {
  const { svc, root, rev } = await setup(content, over);
  const before = snapshot(root, "f.txt");
  await expectCode(svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits }), code);
  expect(snapshot(root, "f.txt")).toEqual(before);
  expect(before.names).toEqual(["f.txt"]); // no temp file, nothing else
}

/** The obvious string implementation the byte-level one must agree with. */
function reference(text: string, edits: TextEdit[]): string | "EDIT_CONFLICT" {
  for (const e of edits) {
    const count = e.expected_count ?? 1;
    if (e.old_text === "") {
      if (text !== "" || count !== 1) return "EDIT_CONFLICT";
      text = e.new_text;
      continue;
    }
    if (text.split(e.old_text).length - 1 !== count) return "EDIT_CONFLICT";
    text = text.split(e.old_text).join(e.new_text);
  }
  return text;
}

describe("edit_text_file output is sized before it is built", () => {
  test("exponential chain (each edit doubles the text) is WRITE_TOO_LARGE from a 1-byte file", async () => {
    const edits = Array.from({ length: 50 }, (_, i) => ({ old_text: "a", new_text: "aa", expected_count: 2 ** i }));
    await refusedUnchanged("a", edits, "WRITE_TOO_LARGE");
  });

  test("a 4 KB replacement times half a million occurrences (the 2 GB request) is refused", async () => {
    const edits = [{ old_text: "a", new_text: "b".repeat(4000), expected_count: 524_288 }];
    await refusedUnchanged("a".repeat(524_288), edits, "WRITE_TOO_LARGE");
  });

  test("max edits × max expected_count × max-size replacement is refused before any I/O", async () => {
    // The lower bound (start size 0) already exceeds the limit: refused even though the file is missing.
    const { svc, root } = single();
    const edits = Array.from({ length: 50 }, () => ({ old_text: "a", new_text: "b".repeat(20_000), expected_count: Number.MAX_SAFE_INTEGER }));
    await expectCode(svc.editTextFile({ workdir: "w", path: "missing.txt", expected_revision: "v1:0000000000000000", edits }), "WRITE_TOO_LARGE");
    expect(physical(root)).toEqual([]);
  });

  test("an intermediate text over the limit is refused even when the final text would fit", async () => {
    // 4 → 12 → 4 bytes with max_write_bytes 10; the request itself is 8 bytes.
    const edits = [
      { old_text: "a", new_text: "aaa", expected_count: 4 },
      { old_text: "aaa", new_text: "a", expected_count: 4 },
    ];
    await refusedUnchanged("aaaa", edits, "WRITE_TOO_LARGE", { max_write_bytes: 10 });
  });

  test("the limit is exact and counts the BOM", async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    await refusedUnchanged(Buffer.concat([bom, Buffer.from("a")]), [{ old_text: "a", new_text: "a".repeat(8) }], "WRITE_TOO_LARGE", { max_write_bytes: 10 });
    const { svc, root, rev } = await setup(Buffer.concat([bom, Buffer.from("a")]), { max_write_bytes: 10 });
    const r = await svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits: [{ old_text: "a", new_text: "é".repeat(3) + "a" }] });
    expect(r.bytes_after).toBe(10);
    expect(fs.readFileSync(path.join(root, "f.txt"))).toEqual(Buffer.concat([bom, Buffer.from("éééa")]));
  });

  test("a count the text cannot hold is EDIT_CONFLICT, not an allocation", async () => {
    // Shrinking edits with an absurd count plan a negative size: the count check refuses first.
    await refusedUnchanged("aaaa", [{ old_text: "aa", new_text: "", expected_count: 1e15 }], "EDIT_CONFLICT");
    await refusedUnchanged("aaaa", [{ old_text: "a", new_text: "", expected_count: 3 }], "EDIT_CONFLICT");
  });

  test("byte-level edits agree with the string reference on random multi-byte text", async () => {
    const alphabet = ["a", "b", "é", "日", "😀", "\r\n", "\n", "ab"];
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed >>> 16) % n;
    };
    const word = (max: number) => Array.from({ length: rnd(max) }, () => alphabet[rnd(alphabet.length)]).join("");
    const { svc, root } = single({ max_write_bytes: 4096 });
    let agreed = 0;
    for (let i = 0; i < 150; i++) {
      const text = word(40);
      write(root, "f.txt", text);
      const rev = (await svc.statFile({ workdir: "w", path: "f.txt" })).revision;
      const edits: TextEdit[] = Array.from({ length: 1 + rnd(3) }, () => {
        const old_text = word(3) || "a";
        return { old_text, new_text: word(4), expected_count: 1 + rnd(3) };
      });
      // Make some edits apply: use the true count for the first edit half the time.
      const first = edits[0] as TextEdit;
      if (rnd(2) === 0) first.expected_count = Math.max(1, text.split(first.old_text).length - 1);
      const want = reference(text, edits);
      try {
        await svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits });
        expect(fs.readFileSync(path.join(root, "f.txt"), "utf8")).toBe(want);
        agreed++;
      } catch (err) {
        expect((err as { code: string }).code).toBe(want === "EDIT_CONFLICT" ? "EDIT_CONFLICT" : "WRITE_TOO_LARGE");
        if (want !== "EDIT_CONFLICT") expect(Buffer.byteLength(want)).toBeGreaterThan(4096);
        expect(fs.readFileSync(path.join(root, "f.txt"), "utf8")).toBe(text);
      }
    }
    expect(agreed).toBeGreaterThan(20); // the generator really exercises successful edits
  });

  test("a long legal edit (10 × 1 Mi replacements) lets another request finish first", async () => {
    const { svc, root, rev } = await setup("a".repeat(1_048_576));
    write(root, "other.txt", "still answering\n");
    const edits = Array.from({ length: 10 }, (_, i) => ({ old_text: i % 2 === 0 ? "a" : "b", new_text: i % 2 === 0 ? "b" : "a", expected_count: 1_048_576 }));
    let editDone = false;
    // Under a fast clock every yield check the edit makes is a yield (fast-clock.ts), however fast
    // the machine: the read is answered while the edit is provably still running.
    const { page, doneAtPage, r } = await withFastClock(async () => {
      const editing = svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits }).then((out) => {
        editDone = true;
        return out;
      });
      const page = await svc.readTextFile({ workdir: "w", path: "other.txt" });
      const doneAtPage = editDone;
      return { page, doneAtPage, r: await editing };
    });
    expect(page.content).toBe("still answering\n");
    expect(doneAtPage).toBe(false);
    expect(r.bytes_after).toBe(1_048_576);
    expect(fs.readFileSync(path.join(root, "f.txt"))).toEqual(Buffer.alloc(1_048_576, "a"));
  }, 60_000);
});
