// Binary transfer: strict base64, size limits, download/upload contracts, overwrite rules, and
// metadata preservation failure proved with a real unprivileged process.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createHash } from "node:crypto";
import { decodeStrictBase64, isStrictBase64 } from "../../src/fs/base64.ts";
import { createFileService } from "../../src/fs/index.ts";
import { expectCode, physical, read, registry, single, workdir, write } from "./helpers.ts";

const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f45f8b0000000049454e44ae426082", "hex");

describe("strict base64", () => {
  test("accepts canonical RFC 4648 only", () => {
    for (const ok of ["", "AA==", "AAE=", "AAEC", "YQ==", "+/+/", "YWJj"]) expect(isStrictBase64(ok)).toBe(true);
    for (const bad of ["***", "YQ=", "Y Q==", "YQ", "YQ===", "=YQ=", "A=A=", "-_-_", "YW\nJj", "日本語=", " AAA", "AA=A"]) expect(isStrictBase64(bad)).toBe(false);
    expect(decodeStrictBase64("AAEC")).toEqual(Buffer.from([0, 1, 2]));
  });
});

describe("upload_binary_file", () => {
  test("malformed payloads are INVALID_BASE64 and create nothing", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    for (const bad of ["***", "YQ=", "Y Q==", "日本語"]) await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: bad }), "INVALID_BASE64");
    expect(physical(root)).toEqual([]);
  });

  test("argument order: revision rules, source required, size pre-check before decoding", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true, max_binary_transfer_bytes: 3 });
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: "***", overwrite: true }), "EXPECTED_REVISION_REQUIRED");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: "***", expected_revision: "v1:0000000000000000" }), "EXPECTED_REVISION_NOT_ALLOWED");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: null }), "BINARY_SOURCE_REQUIRED");
    // 8 chars > 4*ceil(3/3)=4 → refused on length, even though it is not even valid base64
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: "********" }), "BINARY_PAYLOAD_TOO_LARGE");
    expect((await svc.uploadBinaryFile({ workdir: "w", path: "three.bin", data_base64: "AAEC" })).bytes_written).toBe(3);
    const four = single({ binary_transfer_enabled: true, max_binary_transfer_bytes: 4 });
    expect((await four.svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: "AAECAw==" })).bytes_written).toBe(4);
    await expectCode(four.svc.uploadBinaryFile({ workdir: "w", path: "y.bin", data_base64: "AAECAwQ=" }), "BINARY_PAYLOAD_TOO_LARGE");
    expect(physical(root)).toEqual(["three.bin"]);
  });

  test("create exact bytes; empty payload; no overwrite without the flag", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    const r = await svc.uploadBinaryFile({ workdir: "w", path: "img.png", data_base64: PNG.toString("base64") });
    expect(r).toEqual({
      workdir: "w",
      path: "img.png",
      created: true,
      replaced: false,
      bytes_written: PNG.length,
      sha256: createHash("sha256").update(PNG).digest("hex"),
      revision_before: null,
      revision: r.revision,
    });
    expect(read(root, "img.png").equals(PNG)).toBe(true);
    expect((await svc.statFile({ workdir: "w", path: "img.png" })).revision).toBe(r.revision);
    expect((await svc.uploadBinaryFile({ workdir: "w", path: "empty.bin", data_base64: "" })).bytes_written).toBe(0);
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "img.png", data_base64: "AA==" }), "PATH_ALREADY_EXISTS");
    expect(read(root, "img.png").equals(PNG)).toBe(true);
  });

  test("overwrite contract: type before revision, stale token, missing, replaced atomically with mode kept", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    write(root, "a.bin", Buffer.from([1, 2, 3]), 0o640);
    fs.mkdirSync(path.join(root, "dir"));
    const rev = (await svc.statFile({ workdir: "w", path: "a.bin" })).revision;
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "dir", data_base64: "AA==", overwrite: true, expected_revision: "v1:0000000000000000" }), "NOT_A_FILE");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "missing.bin", data_base64: "AA==", overwrite: true, expected_revision: rev }), "PATH_NOT_FOUND");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "a.bin", data_base64: "AA==", overwrite: true, expected_revision: "v1:0000000000000000" }), "REVISION_CONFLICT");
    const r = await svc.uploadBinaryFile({ workdir: "w", path: "a.bin", data_base64: "CQgH", overwrite: true, expected_revision: rev });
    expect(r).toMatchObject({ created: false, replaced: true, bytes_written: 3, revision_before: rev });
    expect(read(root, "a.bin")).toEqual(Buffer.from([9, 8, 7]));
    expect(fs.statSync(path.join(root, "a.bin")).mode & 0o7777).toBe(0o640);
    expect(physical(root)).toEqual(["a.bin", "dir"]);
  });

  test.skipIf(process.getuid?.() !== 0 || Bun.which("setpriv") === null)(
    "METADATA_PRESERVATION_FAILED: an unprivileged process cannot reproduce a foreign group; original intact, no temp",
    async () => {
      // needs root to set up a file whose group the unprivileged editor is not a member of
      const { root, base } = single();
      fs.chmodSync(base, 0o755);
      write(root, "f.txt", "keep me\n", 0o664);
      fs.chownSync(root, 65534, 65534);
      fs.chownSync(path.join(root, "f.txt"), 65534, 0);
      const st = fs.statSync(path.join(root, "f.txt"));
      const svc = createFileService(registry([workdir("w", root)]));
      const rev = (await svc.statFile({ workdir: "w", path: "f.txt" })).revision;
      const child = Bun.spawnSync(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, path.join(import.meta.dir, "fixtures/edit-as-user.ts"), root, rev],
        { env: { ...process.env, HOME: "/tmp" } },
      );
      const out = JSON.parse(child.stdout.toString().trim().split("\n").pop() as string);
      expect(out).toMatchObject({ ok: false, code: "METADATA_PRESERVATION_FAILED" });
      expect(out.message).not.toContain(root);
      expect(read(root, "f.txt").toString()).toBe("keep me\n");
      expect(fs.statSync(path.join(root, "f.txt")).ino).toBe(st.ino);
      expect(physical(root)).toEqual(["f.txt"]);
    },
  );
});

describe("download_binary_file", () => {
  test("bytes, sha256, mime, revision; limits; RO allowed; per-workdir switch", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true, max_binary_transfer_bytes: 100, read_only: true });
    write(root, "img.png", PNG);
    write(root, "a b.bin", Buffer.alloc(100, 7));
    write(root, "big.bin", Buffer.alloc(101, 7));
    write(root, "empty.dat", "");
    const d = await svc.downloadBinaryFile({ workdir: "w", path: "img.png" });
    expect(Buffer.from(d.bytes).equals(PNG)).toBe(true);
    expect(d.meta).toEqual({
      workdir: "w",
      path: "img.png",
      size: PNG.length,
      mime_type: "image/png",
      sha256: createHash("sha256").update(PNG).digest("hex"),
      revision: (await svc.statFile({ workdir: "w", path: "img.png" })).revision,
    });
    expect((await svc.downloadBinaryFile({ workdir: "w", path: "a b.bin" })).meta.size).toBe(100);
    await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "big.bin" }), "BINARY_FILE_TOO_LARGE");
    const e = await svc.downloadBinaryFile({ workdir: "w", path: "empty.dat" });
    expect(e.meta).toMatchObject({ size: 0, mime_type: "application/octet-stream" });
    fs.mkdirSync(path.join(root, "dir"));
    await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "dir" }), "NOT_A_FILE");
    const off = single();
    write(off.root, "x.bin", "x");
    await expectCode(off.svc.downloadBinaryFile({ workdir: "w", path: "x.bin" }), "BINARY_TRANSFER_DISABLED");
  });

  test("8 MiB exactly is fine; one byte more is refused both ways", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    const exact = Buffer.alloc(8 * 1024 * 1024, 0x5a);
    const up = await svc.uploadBinaryFile({ workdir: "w", path: "exact.bin", data_base64: exact.toString("base64") });
    expect(up.bytes_written).toBe(exact.length);
    expect(Buffer.from((await svc.downloadBinaryFile({ workdir: "w", path: "exact.bin" })).bytes).equals(exact)).toBe(true);
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "over.bin", data_base64: Buffer.alloc(exact.length + 1).toString("base64") }), "BINARY_PAYLOAD_TOO_LARGE");
    write(root, "over.bin", Buffer.alloc(exact.length + 1));
    await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "over.bin" }), "BINARY_FILE_TOO_LARGE");
  });
});
