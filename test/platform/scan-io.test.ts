// The per-file calls of a search scan (platform/fs/scan-io.ts) say exactly what node:fs says: on
// Linux statx(fd, "", AT_EMPTY_PATH) gives fstatSync's type, size and link count for every kind
// of object a search can open (an empty file, a file over 4 GiB sparse, a hard-linked one, a
// directory, a FIFO), and read(2) of a fresh descriptor gives readSync's bytes at offset 0.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { scanIo, type OpenFileFacts } from "../../platform/fs/scan-io.ts";
import { mkfifo } from "../fs/helpers.ts";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-scan-io-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function factsOf(p: string): OpenFileFacts {
  const fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const out: OpenFileFacts = { regular: false, size: -1, nlink: -1 };
    scanIo.facts(fd, out);
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

function nodeFacts(p: string): OpenFileFacts {
  const st = fs.statSync(p);
  return { regular: st.isFile(), size: st.size, nlink: st.nlink };
}

describe("scanIo.facts", () => {
  test("a regular file, an empty one and a hard-linked one", () => {
    const f = path.join(base, "plain.txt");
    fs.writeFileSync(f, "x".repeat(12_345));
    const empty = path.join(base, "empty");
    fs.writeFileSync(empty, "");
    const linked = path.join(base, "linked");
    fs.writeFileSync(linked, "abc");
    fs.linkSync(linked, path.join(base, "linked-2"));
    expect(factsOf(f)).toEqual({ regular: true, size: 12_345, nlink: 1 });
    expect(factsOf(empty)).toEqual({ regular: true, size: 0, nlink: 1 });
    expect(factsOf(linked)).toEqual({ regular: true, size: 3, nlink: 2 });
    for (const p of [f, empty, linked]) expect(factsOf(p)).toEqual(nodeFacts(p));
  });

  test("a sparse file larger than 4 GiB keeps its full 64-bit size", () => {
    const big = path.join(base, "sparse");
    const fd = fs.openSync(big, "w");
    fs.ftruncateSync(fd, 5 * 1024 ** 3 + 7);
    fs.closeSync(fd);
    expect(factsOf(big)).toEqual({ regular: true, size: 5 * 1024 ** 3 + 7, nlink: 1 });
  });

  test("a directory and a FIFO are not regular files", () => {
    const dir = path.join(base, "sub");
    fs.mkdirSync(dir);
    expect(factsOf(dir).regular).toBe(false);
    expect(factsOf(dir).nlink).toBe(nodeFacts(dir).nlink);
    if (process.platform === "win32") return; // no FIFOs there
    const fifo = path.join(base, "fifo");
    mkfifo(fifo);
    expect(factsOf(fifo)).toEqual({ regular: false, size: 0, nlink: 1 });
  });

  test("a closed descriptor is an error, never stale facts", () => {
    const fd = fs.openSync(path.join(base, "plain.txt"), "r");
    fs.closeSync(fd);
    expect(() => scanIo.facts(fd, { regular: false, size: 0, nlink: 0 })).toThrow(expect.objectContaining({ code: "EBADF" }));
  });
});

describe("scanIo.readAt", () => {
  test("reads the bytes at an offset into a place in the buffer, and 0 at the end", () => {
    const f = path.join(base, "head.bin");
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 251));
    fs.writeFileSync(f, bytes);
    const fd = fs.openSync(f, "r");
    try {
      const buf = Buffer.alloc(100_000, 0xee);
      expect(scanIo.readAt(fd, buf, 0, 1000, 0)).toBe(1000);
      expect(buf.subarray(0, 1000).equals(bytes.subarray(0, 1000))).toBe(true);
      expect(buf[1000]).toBe(0xee); // nothing past len is touched
      // at an offset of the file, into an offset of the buffer; the descriptor's own offset is not used
      expect(scanIo.readAt(fd, buf, 5000, 3000, 60_000)).toBe(3000);
      expect(buf.subarray(5000, 8000).equals(bytes.subarray(60_000, 63_000))).toBe(true);
      expect(buf[4999]).toBe(0xee);
      expect(buf[8000]).toBe(0xee);
      // a read running past the end stops there; one starting at the end is 0
      expect(scanIo.readAt(fd, buf, 0, 100_000, 69_990)).toBe(10);
      expect(buf.subarray(0, 10).equals(bytes.subarray(69_990))).toBe(true);
      expect(scanIo.readAt(fd, buf, 0, 1000, 70_000)).toBe(0);
    } finally {
      fs.closeSync(fd);
    }
    const fd2 = fs.openSync(f, "r");
    try {
      const buf = Buffer.alloc(100_000);
      expect(scanIo.readAt(fd2, buf, 0, buf.length, 0)).toBe(70_000);
      expect(buf.subarray(0, 70_000).equals(bytes)).toBe(true);
    } finally {
      fs.closeSync(fd2);
    }
  });

  test("a closed descriptor is an error, never stale bytes", () => {
    const fd = fs.openSync(path.join(base, "plain.txt"), "r");
    fs.closeSync(fd);
    expect(() => scanIo.readAt(fd, Buffer.alloc(16), 0, 16, 0)).toThrow(expect.objectContaining({ code: "EBADF" }));
  });
});
