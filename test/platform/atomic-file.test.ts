// The one atomic publish used for rendered config, guards, spool files and the spawn journal:
// real files, real modes, a real full filesystem.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { AtomicPublishError, isAtomicTempName, publishFileAtomic } from "../../platform/fs/atomic-file.ts";
import { cleanupTempDirs, tempDir as supportTempDir } from "../support/temp.ts";

const tempDir = (): string => supportTempDir("serverfs-atomic-");
afterAll(() => {
  cleanupTempDirs();
});

function reasonOf(fn: () => void): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AtomicPublishError) return err.reason;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe("publishFileAtomic", () => {
  test("creates and replaces with the exact mode, leaving only the target", () => {
    const d = tempDir();
    const target = path.join(d, "doc.json");
    publishFileAtomic(target, "one");
    expect(fs.readFileSync(target, "utf8")).toBe("one");
    expect(fs.statSync(target).mode & 0o777).toBe(0o600);
    fs.chmodSync(target, 0o644);
    const before = fs.statSync(target).ino;
    publishFileAtomic(target, new Uint8Array([0x74, 0x77, 0x6f]), { mode: 0o640 });
    expect(fs.readFileSync(target, "utf8")).toBe("two");
    expect(fs.statSync(target).mode & 0o777).toBe(0o640);
    // a rename, not a rewrite in place: a reader holding the old file keeps the old bytes
    expect(fs.statSync(target).ino).not.toBe(before);
    expect(fs.readdirSync(d)).toEqual(["doc.json"]);
  });

  test("writes every byte of a large body", () => {
    const d = tempDir();
    const target = path.join(d, "big.bin");
    const body = new Uint8Array(8 * 1024 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = i % 251;
    publishFileAtomic(target, body);
    expect(Buffer.compare(fs.readFileSync(target), Buffer.from(body))).toBe(0);
  });

  test("a symlink at the target is refused, and neither it nor its pointee changes", () => {
    const d = tempDir();
    const pointee = path.join(d, "pointee");
    fs.writeFileSync(pointee, "keep");
    const link = path.join(d, "link");
    fs.symlinkSync(pointee, link);
    expect(reasonOf(() => publishFileAtomic(link, "evil"))).toBe("target_symlink");
    expect(fs.readlinkSync(link)).toBe(pointee);
    expect(fs.readFileSync(pointee, "utf8")).toBe("keep");
    expect(fs.readdirSync(d).sort()).toEqual(["link", "pointee"]);
    // a dangling link too
    fs.rmSync(pointee);
    expect(reasonOf(() => publishFileAtomic(link, "evil"))).toBe("target_symlink");
    expect(fs.existsSync(pointee)).toBe(false);
  });

  test("a directory or FIFO at the target is refused", () => {
    const d = tempDir();
    fs.mkdirSync(path.join(d, "sub"));
    expect(reasonOf(() => publishFileAtomic(path.join(d, "sub"), "x"))).toBe("target_not_regular");
    expect(Bun.spawnSync(["mkfifo", path.join(d, "fifo")]).exitCode).toBe(0);
    expect(reasonOf(() => publishFileAtomic(path.join(d, "fifo"), "x"))).toBe("target_not_regular");
    expect(fs.readdirSync(d).sort()).toEqual(["fifo", "sub"]);
  });

  test("createOnly never replaces an existing file, and publishes when the name is free", () => {
    const d = tempDir();
    const target = path.join(d, "once.txt");
    publishFileAtomic(target, "first", { createOnly: true });
    expect(reasonOf(() => publishFileAtomic(target, "second", { createOnly: true }))).toBe("target_exists");
    expect(fs.readFileSync(target, "utf8")).toBe("first");
    expect(fs.statSync(target).nlink).toBe(1);
    expect(fs.readdirSync(d)).toEqual(["once.txt"]);
  });

  test("a missing directory is named as such", () => {
    const d = tempDir();
    expect(reasonOf(() => publishFileAtomic(path.join(d, "no", "such.txt"), "x"))).toBe("directory_missing");
    expect(fs.readdirSync(d)).toEqual([]);
  });

  test("temp names are recognisable and never a plain name", () => {
    expect(isAtomicTempName(".doc.json.serverfs-tmp-0a1b2c3d4e5f")).toBe(true);
    expect(isAtomicTempName("doc.json")).toBe(false);
    expect(isAtomicTempName(".hidden")).toBe(false);
  });
});

// A real 16 KiB tmpfs: the write fails part-way; the old bytes survive and no temp file is left.
const mountPoint = supportTempDir("serverfs-atomic-full-");
// mounting needs root and a kernel that allows it here; checked at run time
const mounted =
  process.platform === "linux" &&
  process.getuid?.() === 0 &&
  Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", mountPoint]).exitCode === 0;

describe.skipIf(!mounted)("on a full filesystem", () => {
  afterAll(() => {
    Bun.spawnSync(["umount", mountPoint]);
    fs.rmSync(mountPoint, { recursive: true, force: true });
  });

  test("ENOSPC mid-write: write_failed, target keeps its old bytes, no temp file left", () => {
    const target = path.join(mountPoint, "state.json");
    publishFileAtomic(target, "old");
    expect(reasonOf(() => publishFileAtomic(target, Buffer.alloc(256 * 1024, 0x61)))).toBe("write_failed");
    expect(fs.readFileSync(target, "utf8")).toBe("old");
    expect(fs.readdirSync(mountPoint)).toEqual(["state.json"]);
  });
});
