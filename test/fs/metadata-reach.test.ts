// stat_file and list_directory answer for every entry the kernel can lstat, whatever its
// permissions or type: unreadable files and directories, unix sockets and FIFOs. Linux reaches
// them through O_PATH; macOS, which has no O_PATH (an O_RDONLY open needs read permission and a
// socket refuses open), through fstatat on the held parent. A tree deeper than macOS's PATH_MAX
// (1024) stays reachable: lookups go relative to held descriptors, in steps below the limit.
// The same file runs on the macos workflow's runners against the darwin backend. As root (this
// Linux CI) permission bits do not bite; as the runner user on a Mac they do.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { FileService } from "../../src/fs/index.ts";
import { expectCode, makeSocket, mkfifo, single, write } from "./helpers.ts";

describe.skipIf(process.platform === "win32")("metadata of entries an open cannot reach", () => {
  let svc: FileService;
  let root: string;
  beforeAll(async () => {
    ({ svc, root } = single());
    write(root, "d/locked.txt", "secret\n");
    write(root, "d/open.txt", "hello\n");
    fs.mkdirSync(path.join(root, "d/sealed"));
    await makeSocket(path.join(root, "d/sock"));
    mkfifo(path.join(root, "d/pipe"));
    write(root, "d/through/inner.txt", "inner\n");
    fs.chmodSync(path.join(root, "d/locked.txt"), 0o000);
    fs.chmodSync(path.join(root, "d/sealed"), 0o000);
    fs.chmodSync(path.join(root, "d/through"), 0o311); // search (and write), no read
  });
  afterAll(() => {
    fs.chmodSync(path.join(root, "d/through"), 0o700);
    fs.chmodSync(path.join(root, "d/sealed"), 0o700);
    fs.chmodSync(path.join(root, "d/locked.txt"), 0o600);
  });

  test("list_directory shows every entry with its type; none is dropped", async () => {
    const out = await svc.listDirectory({ workdir: "w", path: "d" });
    expect(out.entries.map((e) => [e.name, e.type, e.size])).toEqual([
      ["locked.txt", "file", 7],
      ["open.txt", "file", 6],
      ["pipe", "other", null],
      ["sealed", "directory", null],
      ["sock", "other", null],
      ["through", "directory", null],
    ]);
    expect(out.returned).toBe(6);
  });

  test("stat_file answers for an unreadable file, an unreadable directory, a socket and a FIFO", async () => {
    expect(await svc.statFile({ workdir: "w", path: "d/locked.txt" })).toMatchObject({ type: "file", size: 7, mime_type: "text/plain" });
    expect(await svc.statFile({ workdir: "w", path: "d/sealed" })).toMatchObject({ type: "directory", size: null });
    expect(await svc.statFile({ workdir: "w", path: "d/sock" })).toMatchObject({ type: "other", size: null, mime_type: null });
    expect(await svc.statFile({ workdir: "w", path: "d/pipe" })).toMatchObject({ type: "other", size: null });
    // the revision list_directory's neighbour would compare against is the stat's, stable
    const a = await svc.statFile({ workdir: "w", path: "d/locked.txt" });
    expect((await svc.statFile({ workdir: "w", path: "d/locked.txt" })).revision).toBe(a.revision);
  });

  test("a directory with search permission but no read permission is still passed through", async () => {
    // Linux: O_PATH; macOS: O_SEARCH after the O_RDONLY open is refused
    expect(await svc.statFile({ workdir: "w", path: "d/through/inner.txt" })).toMatchObject({ type: "file", size: 6 });
    expect((await svc.readTextFile({ workdir: "w", path: "d/through/inner.txt" })).content).toBe("inner\n");
  });

  test("a socket's revision from stat_file is accepted by the mutation paths, which still refuse it", async () => {
    const rev = (await svc.statFile({ workdir: "w", path: "d/sock" })).revision;
    await expectCode(svc.deleteFile({ workdir: "w", path: "d/sock", expected_revision: rev }), "UNSUPPORTED_FILE_TYPE");
    expect(fs.lstatSync(path.join(root, "d/sock")).isSocket()).toBe(true);
  });

  test("stat_file with a trailing '/' on a socket is NOT_A_DIRECTORY", async () => {
    await expectCode(svc.statFile({ workdir: "w", path: "d/sock/" }), "NOT_A_DIRECTORY");
  });
});

describe.skipIf(process.platform === "win32")("a tree deeper than macOS's PATH_MAX (1024 bytes)", () => {
  test("create, write, read, stat and list through a 1,400-byte relative path", async () => {
    const { svc, root } = single();
    const names = Array.from({ length: 7 }, (_, i) => `${i}${"n".repeat(198)}`); // 7 x 200 bytes
    let rel = "";
    for (const n of names) {
      rel = rel === "" ? n : `${rel}/${n}`;
      await svc.createDirectory({ workdir: "w", path: rel });
    }
    const file = `${rel}/deep.txt`;
    expect(Buffer.byteLength(file)).toBeGreaterThan(1400);
    await svc.createTextFile({ workdir: "w", path: file, content: "bottom\n" });
    expect((await svc.readTextFile({ workdir: "w", path: file })).content).toBe("bottom\n");
    expect(await svc.statFile({ workdir: "w", path: file })).toMatchObject({ type: "file", size: 7 });
    expect((await svc.listDirectory({ workdir: "w", path: rel })).entries.map((e) => e.name)).toEqual(["deep.txt"]);
    const st = await svc.statFile({ workdir: "w", path: file });
    await svc.editTextFile({ workdir: "w", path: file, expected_revision: st.revision, edits: [{ old_text: "bottom", new_text: "floor" }] });
    expect((await svc.readTextFile({ workdir: "w", path: file })).content).toBe("floor\n");
    // the bytes really are there, found by walking the real tree one relative chdir at a time
    // (an absolute path this long is ENAMETOOLONG on macOS)
    const cwd = process.cwd();
    try {
      process.chdir(root);
      for (const n of names) {
        expect(fs.readdirSync(".")).toEqual([n]);
        process.chdir(n);
      }
      expect(fs.readFileSync("deep.txt", "utf8")).toBe("floor\n");
    } finally {
      process.chdir(cwd);
    }
  });
});
