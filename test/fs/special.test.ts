// FIFOs, unix sockets and hard links: content channels never block on or open them.
import { beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { FileService } from "../../src/fs/index.ts";
import { expectCode, makeSocket, mkfifo, read, single, write } from "./helpers.ts";

describe.skipIf(process.platform === "win32")("special files", () => {
  let svc: FileService;
  let root: string;
  beforeAll(async () => {
    ({ svc, root } = single({ binary_transfer_enabled: true }));
    mkfifo(path.join(root, "pipe"));
    await makeSocket(path.join(root, "sock"));
    write(root, "data.txt", "data\n");
  });

  test("listed and stat'ed as other", async () => {
    const entries = (await svc.listDirectory({ workdir: "w" })).entries;
    expect(entries.find((e) => e.name === "pipe")).toMatchObject({ type: "other", size: null });
    expect(entries.find((e) => e.name === "sock")).toMatchObject({ type: "other", size: null });
    const st = await svc.statFile({ workdir: "w", path: "pipe" });
    expect(st.type).toBe("other");
    expect(st.mime_type).toBeNull();
    expect(st.revision).toMatch(/^v1:[0-9a-f]{16}$/);
  });

  test("reads never block: UNSUPPORTED_FILE_TYPE for FIFO and socket on every content channel", async () => {
    // a blocking open would hang here: the test's own timeout is the bound
    for (const p of ["pipe", "sock"]) {
      await expectCode(svc.readTextFile({ workdir: "w", path: p }), "UNSUPPORTED_FILE_TYPE");
      await expectCode(svc.readResource({ workdir: "w", path: p }), "UNSUPPORTED_FILE_TYPE");
      await expectCode(svc.downloadBinaryFile({ workdir: "w", path: p }), "UNSUPPORTED_FILE_TYPE");
      const rev = (await svc.statFile({ workdir: "w", path: p })).revision;
      await expectCode(svc.editTextFile({ workdir: "w", path: p, expected_revision: rev, edits: [{ old_text: "a", new_text: "b" }] }), "UNSUPPORTED_FILE_TYPE");
      await expectCode(svc.deleteFile({ workdir: "w", path: p, expected_revision: rev }), "UNSUPPORTED_FILE_TYPE");
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: p, data_base64: "AA==", overwrite: true, expected_revision: rev }), "UNSUPPORTED_FILE_TYPE");
      await expectCode(svc.createTextFile({ workdir: "w", path: p, content: "x" }), "PATH_ALREADY_EXISTS");
      await expectCode(svc.createDirectory({ workdir: "w", path: p }), "PATH_ALREADY_EXISTS");
      await expectCode(svc.deleteDirectory({ workdir: "w", path: p, expected_revision: rev }), "NOT_A_DIRECTORY");
    }
    expect(fs.lstatSync(path.join(root, "pipe")).isFIFO()).toBe(true);
    expect(fs.lstatSync(path.join(root, "sock")).isSocket()).toBe(true);
  });

  test("search and find skip them without blocking", async () => {
    expect((await svc.searchText({ workdir: "w", query: "data" })).matches).toEqual([{ path: "data.txt", line: 1, text: "data" }]);
    expect((await svc.findFiles({ workdir: "w", pattern: "*" })).matches).toEqual([{ path: "data.txt" }]);
  });

  test("hard links: edit and overwrite refuse nlink > 1 and keep the inode shared", async () => {
    write(root, "hl/a.txt", "shared\n");
    fs.linkSync(path.join(root, "hl/a.txt"), path.join(root, "hl/b.txt"));
    const rev = (await svc.statFile({ workdir: "w", path: "hl/a.txt" })).revision;
    await expectCode(svc.editTextFile({ workdir: "w", path: "hl/a.txt", expected_revision: rev, edits: [{ old_text: "shared", new_text: "x" }] }), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "hl/a.txt", data_base64: "AA==", overwrite: true, expected_revision: rev }), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
    expect(fs.statSync(path.join(root, "hl/a.txt")).ino).toBe(fs.statSync(path.join(root, "hl/b.txt")).ino);
    expect(read(root, "hl/b.txt").toString()).toBe("shared\n");
    expect(fs.readdirSync(path.join(root, "hl")).sort()).toEqual(["a.txt", "b.txt"]);
  });
});
