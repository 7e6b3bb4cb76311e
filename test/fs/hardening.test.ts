// New content never keeps setuid/setgid; a path that can only name a directory never creates,
// replaces or deletes a file (INVALID_PATH); a file that changes while it is read is
// FILE_CHANGED_DURING_READ whatever the change made it look like; base64 is canonical. Every
// refusal asserts the disk afterwards: bytes, mode, inode, directory entries.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { listXattrs, setXattr } from "../../platform/fs/linux.ts";
import { downloadReadHooks } from "../../src/fs/binary.ts";
import { readTextHooks } from "../../src/fs/read.ts";
import { snapshot } from "./disk-snapshot.ts";
import { expectCode, physical, single, write } from "./helpers.ts";

const isRoot = process.getuid?.() === 0;

afterEach(() => {
  downloadReadHooks.afterChunk = null;
  readTextHooks.afterChunk = null;
});

/** A real, separate writer process acting on the file at a point the reader chose. */
function childAppend(file: string, bytes: number): void {
  const r = Bun.spawnSync(["sh", "-c", `head -c ${bytes} /dev/zero | tr '\\0' 'z' >> "$1"`, "sh", file]);
  if (r.exitCode !== 0) throw new Error("appending child failed");
}

function childTruncate(file: string, size: number): void {
  const r = Bun.spawnSync(["truncate", "-s", String(size), file]);
  if (r.exitCode !== 0) throw new Error("truncating child failed");
}

describe("replacing content clears setuid and setgid", () => {
  test.skipIf(!isRoot)("edit and upload-overwrite of a 06755 file leave 0755, owner, group and user xattrs", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    const p = path.join(root, "tool");
    write(root, "tool", "#!/bin/sh\necho v1\n");
    fs.chownSync(p, 1234, 5678);
    fs.chmodSync(p, 0o6755); // after chown: chown itself clears the bits
    const fd = fs.openSync(p, "r");
    setXattr(fd, "user.serverfs.kept", Buffer.from("yes"));
    fs.closeSync(fd);
    expect(fs.statSync(p).mode & 0o7777).toBe(0o6755);

    const rev = (await svc.statFile({ workdir: "w", path: "tool" })).revision;
    const edited = await svc.editTextFile({ workdir: "w", path: "tool", expected_revision: rev, edits: [{ old_text: "v1", new_text: "v2" }] });
    let st = fs.statSync(p);
    expect(st.mode & 0o7777).toBe(0o755);
    expect([st.uid, st.gid]).toEqual([1234, 5678]);
    expect(fs.readFileSync(p, "utf8")).toBe("#!/bin/sh\necho v2\n");
    const xfd = fs.openSync(p, "r");
    expect(listXattrs(xfd).get("user.serverfs.kept")?.toString()).toBe("yes");
    fs.closeSync(xfd);

    fs.chmodSync(p, 0o6755);
    const rev2 = (await svc.statFile({ workdir: "w", path: "tool" })).revision;
    expect(rev2).not.toBe(edited.revision);
    await svc.uploadBinaryFile({ workdir: "w", path: "tool", data_base64: Buffer.from("#!/bin/sh\necho v3\n").toString("base64"), overwrite: true, expected_revision: rev2 });
    st = fs.statSync(p);
    expect(st.mode & 0o7777).toBe(0o755);
    expect([st.uid, st.gid]).toEqual([1234, 5678]);
    expect(fs.readFileSync(p, "utf8")).toBe("#!/bin/sh\necho v3\n");
    expect(physical(root)).toEqual(["tool"]);
  });

  test("the sticky and permission bits are kept, only setuid/setgid go", async () => {
    const { svc, root } = single();
    write(root, "f.txt", "x\n");
    fs.chmodSync(path.join(root, "f.txt"), 0o3640); // setgid + sticky: an unprivileged owner may set both
    const rev = (await svc.statFile({ workdir: "w", path: "f.txt" })).revision;
    await svc.editTextFile({ workdir: "w", path: "f.txt", expected_revision: rev, edits: [{ old_text: "x", new_text: "y" }] });
    expect(fs.statSync(path.join(root, "f.txt")).mode & 0o7777).toBe(0o1640);
  });
});

describe("a trailing slash names a directory", () => {
  const dirOnly = ["newdir/", "newdir/.", "newdir//", "sub/newdir/..", "./newdir/"];

  test("create_text_file and upload never create a file through a directory-only path", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    fs.mkdirSync(path.join(root, "sub"));
    for (const p of dirOnly) {
      await expectCode(svc.createTextFile({ workdir: "w", path: p, content: "x" }), "INVALID_PATH");
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: p, data_base64: "eA==" }), "INVALID_PATH");
    }
    expect(physical(root)).toEqual(["sub"]);
    expect(physical(path.join(root, "sub"))).toEqual([]);
    // Directories themselves may still be named with a slash.
    expect((await svc.createDirectory({ workdir: "w", path: "newdir/" })).path).toBe("newdir");
    expect(fs.statSync(path.join(root, "newdir")).isDirectory()).toBe(true);
  });

  test("an existing file named with a trailing slash is INVALID_PATH for edit, upload-overwrite and delete", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    write(root, "f.txt", "keep\n");
    const rev = (await svc.statFile({ workdir: "w", path: "f.txt" })).revision;
    const before = snapshot(root, "f.txt");
    for (const p of ["f.txt/", "f.txt/."]) {
      await expectCode(svc.editTextFile({ workdir: "w", path: p, expected_revision: rev, edits: [{ old_text: "keep", new_text: "lost" }] }), "INVALID_PATH");
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: p, data_base64: "eA==", overwrite: true, expected_revision: rev }), "INVALID_PATH");
      await expectCode(svc.deleteFile({ workdir: "w", path: p, expected_revision: rev }), "INVALID_PATH");
      await expectCode(svc.createTextFile({ workdir: "w", path: p, content: "x" }), "INVALID_PATH");
    }
    expect(snapshot(root, "f.txt")).toEqual(before);
  });

  test("reads and stat never reach a file through a directory-only path; directories still may end in '/'", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    write(root, "f.txt", "keep\n");
    fs.mkdirSync(path.join(root, "sub"));
    write(root, "sub/g.txt", "g\n");
    const before = snapshot(root, "f.txt");
    for (const p of ["f.txt/", "f.txt/.", "sub/g.txt//"]) {
      await expectCode(svc.readTextFile({ workdir: "w", path: p }), "INVALID_PATH");
      await expectCode(svc.downloadBinaryFile({ workdir: "w", path: p }), "INVALID_PATH");
      await expectCode(svc.readResource({ workdir: "w", path: p }), "INVALID_PATH");
      await expectCode(svc.statFile({ workdir: "w", path: p }), "NOT_A_DIRECTORY");
    }
    expect((await svc.statFile({ workdir: "w", path: "sub/" })).type).toBe("directory");
    expect((await svc.listDirectory({ workdir: "w", path: "sub/" })).entries.map((e) => e.name)).toEqual(["g.txt"]);
    expect((await svc.readTextFile({ workdir: "w", path: "f.txt" })).content).toBe("keep\n");
    expect(snapshot(root, "f.txt")).toEqual(before);
  });

  test("the root keeps its own code", async () => {
    const { svc } = single();
    await expectCode(svc.createTextFile({ workdir: "w", path: "./", content: "x" }), "ROOT_MUTATION_NOT_ALLOWED");
  });
});

describe("growth during a read is a change, not a size or content verdict", () => {
  test("download: a real writer appends after the first chunk → FILE_CHANGED_DURING_READ", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    const p = path.join(root, "grow.bin");
    write(root, "grow.bin", Buffer.alloc(200_000, 1));
    let appended = 0;
    downloadReadHooks.afterChunk = (got) => {
      if (appended++ === 0 && got < 200_000) childAppend(p, 300_000);
    };
    await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "grow.bin" }), "FILE_CHANGED_DURING_READ");
    expect(appended).toBeGreaterThan(0);
    expect(fs.statSync(p).size).toBe(500_000); // the writer really ran
    downloadReadHooks.afterChunk = null;
    // The same file, now stable, downloads whole.
    expect((await svc.downloadBinaryFile({ workdir: "w", path: "grow.bin" })).meta.size).toBe(500_000);
  });

  test("download: growth by a single byte and a shrink are both FILE_CHANGED_DURING_READ", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true, max_binary_transfer_bytes: 200_000 });
    const p = path.join(root, "f.bin");
    for (const act of [() => childAppend(p, 1), () => childTruncate(p, 10)]) {
      write(root, "f.bin", Buffer.alloc(200_000, 2)); // exactly the limit
      let done = false;
      downloadReadHooks.afterChunk = () => {
        if (!done) act();
        done = true;
      };
      await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "f.bin" }), "FILE_CHANGED_DURING_READ");
    }
    downloadReadHooks.afterChunk = null;
    write(root, "f.bin", Buffer.alloc(200_001, 2));
    await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "f.bin" }), "BINARY_FILE_TOO_LARGE");
  });

  test("read_text_file: a line that grows past max_read_bytes mid-read is FILE_CHANGED_DURING_READ, not LINE_TOO_LARGE", async () => {
    const { svc, root } = single({ max_read_bytes: 100_000 });
    const p = path.join(root, "log.txt");
    write(root, "log.txt", "y".repeat(90_000)); // one line, under the limit, no newline yet
    let done = false;
    readTextHooks.afterChunk = () => {
      if (!done) childAppend(p, 50_000);
      done = true;
    };
    await expectCode(svc.readTextFile({ workdir: "w", path: "log.txt" }), "FILE_CHANGED_DURING_READ");
    readTextHooks.afterChunk = null;
    // Unchanged, the same file really is one line too large.
    await expectCode(svc.readTextFile({ workdir: "w", path: "log.txt" }), "LINE_TOO_LARGE");
  });
});

describe("strict base64 is canonical", () => {
  test("non-zero padding bits are INVALID_BASE64 and create nothing", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true });
    for (const bad of ["QR==", "QUJ=", "/x==", "//9=", "AB==", "AAB="]) {
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "x.bin", data_base64: bad }), "INVALID_BASE64");
    }
    expect(physical(root)).toEqual([]);
    // Their canonical twins are accepted and decode to the same bytes the lax decoder would give.
    const r = await svc.uploadBinaryFile({ workdir: "w", path: "a.bin", data_base64: "QQ==" });
    expect(r.bytes_written).toBe(1);
    expect(fs.readFileSync(path.join(root, "a.bin"))).toEqual(Buffer.from("A"));
  });

  test("every byte string has exactly one accepted encoding", async () => {
    const { isStrictBase64 } = await import("../../src/fs/base64.ts");
    for (const len of [1, 2]) {
      for (let b = 0; b < 256; b++) {
        const bytes = Buffer.alloc(len, b);
        const canonical = bytes.toString("base64");
        expect(isStrictBase64(canonical)).toBe(true);
        // Flip each of the unused low bits of the last data character.
        const idx = canonical.indexOf("=") - 1;
        const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const v = alpha.indexOf(canonical[idx] as string);
        const unused = len === 1 ? 4 : 2;
        for (let bit = 0; bit < unused; bit++) {
          const twin = canonical.slice(0, idx) + alpha[v ^ (1 << bit)] + canonical.slice(idx + 1);
          expect(isStrictBase64(twin)).toBe(false);
        }
      }
    }
  });
});

describe("error answers are never much larger than a fixed size", () => {
  test("a 1 MB path of control characters is INVALID_NAME with a message of a few KB at most; echoes elsewhere are cut too", async () => {
    const { svc, root } = single();
    const huge = "\u0001".repeat(1_000_000);
    const e = await expectCode(svc.createTextFile({ workdir: "w", path: huge, content: "x" }), "INVALID_NAME");
    expect(e.message.length).toBeLessThan(3000);
    expect(e.message).toContain("\\x01\\x01");
    expect(e.message).toContain("999488 more characters");
    expect((await expectCode(svc.readTextFile({ workdir: huge, path: "a" }), "WORKDIR_NOT_FOUND")).message.length).toBeLessThan(3000);
    const ro = single({ read_only: true });
    expect((await expectCode(ro.svc.createTextFile({ workdir: "w", path: huge, content: "x" }), "WORKDIR_READ_ONLY")).message.length).toBeLessThan(3000);
    // 4096 bytes is still a path (here simply missing); one byte more is not.
    await expectCode(svc.readTextFile({ workdir: "w", path: "a".repeat(4096) }), "INVALID_NAME"); // the kernel's own NAME_MAX
    await expectCode(svc.readTextFile({ workdir: "w", path: `${"abc/".repeat(1024)}x` }), "INVALID_NAME");
    await expectCode(svc.readTextFile({ workdir: "w", path: "abc/".repeat(1023) + "xyz" }), "PATH_NOT_FOUND");
    expect(physical(root)).toEqual([]);
  });
});
