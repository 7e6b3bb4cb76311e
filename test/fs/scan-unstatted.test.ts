// A searched file is fstat'ed only when its first read leaves its size or type in question
// (Scanner.scanUnstatted): files at every size around the read's length, search_max_file_bytes
// on both sides of it, and the descriptors a swap after the walk could hand the scanner (a FIFO,
// a directory, a character device) all give what an fstat-first scan gives. And the fstat-first
// scan (Scanner.scanFile, refuse_hardlinked_reads) of a file that grew past the buffer after its
// fstat, so that its first read fills the buffer, still finds its lines by their numbers.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { BUFFER_BYTES, Scanner } from "../../src/fs/search/scan.ts";
import type { OpenFileFacts } from "../../platform/fs/scan-io.ts";
import type { Pace } from "../../src/fs/search/scan-types.ts";
import { single, tempDir, write } from "./helpers.ts";

const linux = process.platform === "linux";

/** A file of exactly `size` bytes whose last line is "needle <size>" (and a newline). */
function fileOf(size: number): Buffer {
  const tail = Buffer.from(`needle ${size}\n`);
  const body = Buffer.alloc(size - tail.length, "x");
  for (let i = 99; i < body.length; i += 100) body[i] = 10;
  body[body.length - 1] = 10;
  return Buffer.concat([body, tail]);
}

const SIZES = [BUFFER_BYTES - 2, BUFFER_BYTES - 1, BUFFER_BYTES, BUFFER_BYTES + 1, 200];

describe("files around the first read's length", () => {
  test("each is searched whole, with its last line's number", async () => {
    const { svc, root } = single();
    for (const size of SIZES) write(root, `f${size}.txt`, fileOf(size));
    const r = await svc.searchText({ workdir: "w", query: "needle", limit: 100 });
    const got = new Map(r.matches.map((m) => [m.path, [m.line, m.text]]));
    for (const size of SIZES) {
      const lines = fileOf(size).toString("latin1").split("\n").length - 1;
      expect(got.get(`f${size}.txt`)).toEqual([lines, `needle ${size}`]);
    }
    expect(r.returned).toBe(SIZES.length);
  });

  for (const limit of [BUFFER_BYTES - 2, BUFFER_BYTES - 1, BUFFER_BYTES, 199, 200]) {
    test(`search_max_file_bytes = ${limit} skips exactly the files larger than it`, async () => {
      const { svc, root } = single({}, { search_max_file_bytes: limit });
      for (const size of SIZES) write(root, `f${size}.txt`, fileOf(size));
      const r = await svc.searchText({ workdir: "w", query: "needle", limit: 100 });
      const want = SIZES.filter((s) => s <= limit).map((s) => `f${s}.txt`).sort();
      expect(r.matches.map((m) => m.path).sort()).toEqual(want);
      expect(r.unreadable).toBe(0);
    });
  }

  test("case-insensitive and regex searches take the same way", async () => {
    const { svc, root } = single();
    for (const size of SIZES) write(root, `f${size}.txt`, fileOf(size));
    const folded = await svc.searchText({ workdir: "w", query: "NEEDLE", case_sensitive: false, limit: 100 });
    expect(folded.returned).toBe(SIZES.length);
    const regex = await svc.searchText({ workdir: "w", query: "needle [0-9]+$", regex: true, limit: 100 });
    expect(regex.returned).toBe(SIZES.length);
  });
});

const pace: Pace = { tick: () => false, pause: async () => {} };

describe.skipIf(!linux)("descriptors that are not regular files (Linux: mkfifo, /dev/zero)", () => {
  const facts: OpenFileFacts = { regular: false, size: 0, nlink: 0 };
  const scanner = new Scanner("needle", true);

  test("a FIFO: its read fails (ESPIPE), the fstat says so, and the answer is no match, not an error", () => {
    const dir = tempDir();
    const fifo = path.join(dir, "pipe");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const fd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      expect(scanner.scanUnstatted(fd, 1 << 30, "pipe", 10, pace, facts)).toEqual([]);
      expect(facts.regular).toBe(false);
    } finally {
      fs.closeSync(fd);
    }
  });

  test("a directory: its read fails (EISDIR), and the answer is no match", () => {
    const fd = fs.openSync(tempDir(), fs.constants.O_RDONLY);
    try {
      expect(scanner.scanUnstatted(fd, 1 << 30, "d", 10, pace, facts)).toEqual([]);
    } finally {
      fs.closeSync(fd);
    }
  });

  test("a character device that fills the read (/dev/zero) is fstat'ed and skipped", () => {
    const fd = fs.openSync("/dev/zero", "r");
    try {
      expect(scanner.scanUnstatted(fd, 1 << 30, "zero", 10, pace, facts)).toEqual([]);
      expect(facts.regular).toBe(false);
    } finally {
      fs.closeSync(fd);
    }
  });

  test("a file whose one read holds a candidate is fstat'ed before it is scanned; one that settles is not", async () => {
    const dir = tempDir();
    const hit = path.join(dir, "hit.txt");
    const miss = path.join(dir, "miss.txt");
    fs.writeFileSync(hit, "a needle here\n");
    fs.writeFileSync(miss, "nothing here\n");
    for (const [file, found, statted] of [
      [miss, 0, false],
      [hit, 1, true],
    ] as const) {
      const fd = fs.openSync(file, "r");
      try {
        const seen: OpenFileFacts = { regular: false, size: -1, nlink: 0 };
        const r = await scanner.scanUnstatted(fd, 1 << 30, "f", 10, pace, seen);
        expect(r.length).toBe(found);
        expect(seen.size !== -1).toBe(statted);
      } finally {
        fs.closeSync(fd);
      }
    }
  });
});

describe("a file that grew after its fstat (Scanner.scanFile)", () => {
  test("a full first read is taken line by line, numbers and texts exact", async () => {
    const dir = tempDir();
    const file = path.join(dir, "grown.txt");
    const lines = Array.from({ length: 40_000 }, (_, i) => (i === 2 ? "needle here" : i === 39_000 ? "needle late" : `line ${i + 1} ${"z".repeat(40)}`));
    fs.writeFileSync(file, `${lines.join("\n")}\n`);
    expect(fs.statSync(file).size).toBeGreaterThan(BUFFER_BYTES);
    const fd = fs.openSync(file, "r");
    try {
      // the size an fstat saw before the file grew to ~2 MB
      const found = await new Scanner("needle", true).scanFile(fd, 100, "grown.txt", 10, pace);
      expect(found.map((m) => [m.line, m.text])).toEqual([[3, "needle here"]]);
    } finally {
      fs.closeSync(fd);
    }
  });
});
