// A full filesystem (a real 64 KiB tmpfs): every mutation fails with MUTATION_IO_ERROR, the
// original bytes survive and no temp file is left behind.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode, registry, tempDir, workdir, write } from "./helpers.ts";

function tryMount(dir: string): boolean {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
  return Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir]).exitCode === 0;
}

const mountPoint = tempDir();
// mounting needs root and a kernel that allows it here; checked at run time
const mounted = tryMount(mountPoint);

describe.skipIf(!mounted)("ENOSPC", () => {
  let svc: FileService;
  const root = path.join(mountPoint, "root");
  beforeAll(() => {
    fs.mkdirSync(root);
    write(root, "keep.txt", "original\n");
    svc = createFileService(registry([workdir("w", root, { binary_transfer_enabled: true })]));
  });
  afterAll(() => {
    svc.close();
    Bun.spawnSync(["umount", mountPoint]);
  });

  test("create, upload and edit fail cleanly on a full filesystem", async () => {
    const big = "x".repeat(200 * 1024);
    await expectCode(svc.createTextFile({ workdir: "w", path: "big.txt", content: big }), "NO_SPACE_LEFT");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "big.bin", data_base64: Buffer.alloc(200 * 1024).toString("base64") }), "NO_SPACE_LEFT");
    const rev = (await svc.statFile({ workdir: "w", path: "keep.txt" })).revision;
    await expectCode(svc.editTextFile({ workdir: "w", path: "keep.txt", expected_revision: rev, edits: [{ old_text: "original", new_text: big }] }), "NO_SPACE_LEFT");
    expect(fs.readdirSync(root)).toEqual(["keep.txt"]);
    expect(fs.readFileSync(path.join(root, "keep.txt"), "utf8")).toBe("original\n");
    // and the filesystem still works for a small change
    const ok = await svc.editTextFile({ workdir: "w", path: "keep.txt", expected_revision: rev, edits: [{ old_text: "original", new_text: "changed" }] });
    expect(fs.readFileSync(path.join(root, "keep.txt"), "utf8")).toBe("changed\n");
    expect(ok.revision).toMatch(/^v1:/);
  });
});
