// The Linux getdents64 reader returns exactly what node:fs.readdirSync returns (names, odd and
// invalid-UTF-8 names decoded the same way, kinds, across several kernel buffers), and the
// bounded selection behind readDirSmallest keeps exactly the k smallest accepted names in
// code-point order with the exact accepted count, checked against a full sort.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { selectInSteps } from "../../platform/fs/dir-select.ts";
import { compareNames } from "../../platform/fs/name-order.ts";
import type { DirEntryInfo } from "../../platform/fs/native.ts";
import { linuxNative } from "../../platform/fs/resolve-linux.ts";
import { makeSocket, mkfifo } from "../fs/helpers.ts";
import { repetitions } from "../support/stress.ts";

/** Random selections checked (the stress lane: 300). */
const PROPERTY_ROUNDS = repetitions(100, 300);

const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-dirents-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function kindOf(d: fs.Dirent): DirEntryInfo["kind"] {
  if (d.isFile()) return "file";
  if (d.isDirectory()) return "directory";
  if (d.isSymbolicLink()) return "symlink";
  return "other";
}

/** What readdirSync says, in code-point name order. */
function expected(dir: string): DirEntryInfo[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .map((d) => ({ name: d.name, kind: kindOf(d) }))
    .sort((a, b) => compareNames(a.name, b.name));
}

function withDir<T>(dir: string, f: (fd: number) => T): T {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return f(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function drain(sel: ReturnType<typeof linuxNative.readDirSmallest>): { entries: DirEntryInfo[]; visible: number; steps: number } {
  let steps = 0;
  while (sel.step()) steps++;
  return { ...sel.result(), steps };
}

/** Create a file whose name is raw bytes (python: node cannot name a file with invalid UTF-8). */
function rawNames(dir: string, hex: string[]): void {
  const r = Bun.spawnSync(["python3", "-c", `import os,sys\nfor h in sys.argv[2:]: open(os.path.join(sys.argv[1].encode(), bytes.fromhex(h)), "wb").close()`, dir, ...hex]);
  if (r.exitCode !== 0) throw new Error(`python3 failed: ${r.stderr.toString()}`);
}

describe.skipIf(process.platform !== "linux")("getdents64 reader (Linux only: getdents64 is a Linux syscall)", () => {
  test("names and kinds are readdirSync's, odd and invalid UTF-8 names included", async () => {
    const dir = path.join(base, "odd");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "plain.txt"), "x");
    fs.mkdirSync(path.join(dir, "sub"));
    fs.symlinkSync("plain.txt", path.join(dir, "link"));
    fs.symlinkSync("/nonexistent", path.join(dir, "dangling"));
    mkfifo(path.join(dir, "fifo"));
    await makeSocket(path.join(dir, "sock"));
    for (const n of ["...", "..x", ".hidden", "é", "e\u0301", "\u{1F600}", "\uE000", "\uFFFD", "a\nb", "\u0001ctl", " lead", "x".repeat(255)]) {
      fs.writeFileSync(path.join(dir, n), "");
    }
    // invalid UTF-8: lone 0xff, a truncated sequence, an overlong, a lone surrogate, a bare continuation
    rawNames(dir, ["61ff62", "e282", "c0af", "eda08078", "80", "fe"]);
    // the ASCII fast path's edges: DEL (last ASCII byte), and a high byte only at the very end
    rawNames(dir, ["7f", "6162c3"]);
    const want = expected(dir);
    expect(want.length).toBe(26);
    // three invalid names decode to the spelling of the valid U+FFFD name, as readdirSync shows them
    expect(want.filter((e) => e.name === "\uFFFD").length).toBe(4);
    withDir(dir, (fd) => {
      expect([...linuxNative.readDir(fd)].sort((a, b) => compareNames(a.name, b.name))).toEqual(want);
      expect(drain(linuxNative.readDirSmallest(fd, want.length)).entries).toEqual(want);
      // the same descriptor read twice gives the same answer (the reader rewinds)
      expect(drain(linuxNative.readDirSmallest(fd, 1000))).toMatchObject({ entries: want, visible: want.length });
    });
  });

  test("an empty directory has no entries and takes no step", () => {
    const dir = path.join(base, "empty");
    fs.mkdirSync(dir);
    withDir(dir, (fd) => {
      expect(linuxNative.readDir(fd)).toEqual([]);
      expect(drain(linuxNative.readDirSmallest(fd, 10))).toEqual({ entries: [], visible: 0, steps: 0 });
    });
  });

  test("a directory several kernel buffers long: 5 000 long names, all of them, the k smallest, the visible count", () => {
    const dir = path.join(base, "many");
    fs.mkdirSync(dir);
    // ~230 bytes per record: 5 000 records are over 1 MiB, four times the reader's buffer
    for (let i = 0; i < 5000; i++) fs.closeSync(fs.openSync(path.join(dir, `${"n".repeat(200)}-${String((i * 7919) % 5000).padStart(5, "0")}`), "w"));
    const want = expected(dir);
    expect(want.length).toBe(5000);
    withDir(dir, (fd) => {
      expect([...linuxNative.readDir(fd)].sort((a, b) => compareNames(a.name, b.name))).toEqual(want);
      const even = (name: string) => Number(name.slice(-5)) % 2 === 0;
      const r = drain(linuxNative.readDirSmallest(fd, 37, even));
      expect(r.entries).toEqual(want.filter((e) => even(e.name)).slice(0, 37));
      expect(r.visible).toBe(2500);
      expect(r.steps).toBeGreaterThan(1); // paced: a few hundred entries per step
      expect(drain(linuxNative.readDirSmallest(fd, 0)).visible).toBe(5000);
    });
  });
});

describe("bounded selection (selectInSteps)", () => {
  const ALPHABET = ["a", "b", "z", "A", "-", ".", "é", "\uE000", "\uFFFD", "\u{1F600}", "\u{10FFFF}", "\u0301", "0"];

  function rnd(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }

  test("property: the k smallest accepted in code-point order, and the accepted count, for random names, k, filters and chunking", () => {
    const r = rnd(0x5eed);
    for (let round = 0; round < PROPERTY_ROUNDS; round++) {
      const n = Math.floor(r() * 3000);
      // odd rounds: only names below U+D800, where the selection sorts by plain string order
      const alphabet = round % 2 === 0 ? ALPHABET : ALPHABET.filter((c) => c < "\ud800");
      const names = new Set<string>();
      while (names.size < n) {
        let s = "";
        const len = 1 + Math.floor(r() * 6);
        for (let i = 0; i < len; i++) s += alphabet[Math.floor(r() * alphabet.length)];
        names.add(s);
      }
      // every kind, files the most common (the selection keeps only the non-file kinds aside)
      const KINDS: DirEntryInfo["kind"][] = ["file", "directory", "file", "symlink", "file", "other", "unknown"];
      const all = [...names].map((name) => ({ name, kind: KINDS[Math.floor(r() * KINDS.length)] as DirEntryInfo["kind"] }));
      const k = [0, 1, 2, Math.floor(r() * 50), Math.floor(r() * 2000), n, n + 5][round % 7] as number;
      const mod = 1 + Math.floor(r() * 4);
      const accept = (name: string) => name.length % mod !== 0;
      const chunk = 1 + Math.floor(r() * 700);
      let at = 0;
      const sel = selectInSteps(k, accept, (push) => {
        for (const e of all.slice(at, at + chunk)) push(e.name, e.kind);
        at += chunk;
        return at < all.length;
      });
      while (sel.step());
      const kept = all.filter((e) => accept(e.name)).sort((a, b) => compareNames(a.name, b.name));
      expect(sel.result()).toEqual({ entries: kept.slice(0, k), visible: kept.length });
    }
  });

  test("code-point order, not UTF-16 order: U+E000 sorts before an astral character", () => {
    const sel = selectInSteps(2, () => true, (push) => {
      for (const n of ["\u{1F600}", "\uE000", "z", "\uFFFD"]) push(n, "file");
      return false;
    });
    while (sel.step());
    expect(sel.result().entries.map((e) => e.name)).toEqual(["z", "\uE000"]);
  });
});
