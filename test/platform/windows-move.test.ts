// move_file on the Windows backend (handle-relative FILE_RENAME_INFORMATION with RootDirectory =
// the verified destination handle and no replace), in process under Windows Bun: on Windows and
// in the Windows lane under Wine (scripts/windows-lane/run.sh). Skips elsewhere: the backend's
// ntdll calls exist only there (the Linux and macOS backends are covered by test/fs/move.test.ts).
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fsNative, type FsNative } from "../../platform/fs/native.ts";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode } from "../fs/helpers.ts";
import { registry, workdir } from "../support/registry.ts";
import { WINE_LINKS_FIXTURE, removeTree } from "../support/windows-serve.ts";

const onWindows = process.platform === "win32";
const underWine = onWindows && (await import("../../platform/fs/windows.ts")).underWine();

const made: string[] = [];
afterAll(() => {
  for (const d of made) removeTree(d);
});

function fresh(): { base: string; root: string } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-winmove-")));
  made.push(base);
  const root = path.join(base, "root");
  fs.mkdirSync(root);
  return { base, root };
}

/** Names and bytes of every file below `dir` (directories end in '/'). */
function tree(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = rel === "" ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) Object.assign(out, { [`${r}/`]: "" }, tree(dir, r));
    else out[r] = fs.readFileSync(path.join(dir, r)).toString("hex");
  }
  return out;
}

function service(root: string, native?: FsNative): FileService {
  return createFileService(registry([workdir("w", root)]), native === undefined ? {} : { native });
}

async function rev(svc: FileService, p: string): Promise<string> {
  return (await svc.statFile({ workdir: "w", path: p })).revision;
}

describe.skipIf(!onWindows)("move_file on the Windows backend (needs Windows or the Wine lane)", () => {
  test("a file and a directory move with their bytes; the source is gone; revision == next stat", async () => {
    const { root } = fresh();
    const bytes = Buffer.from([0x89, 0x50, 0, 1, 255, 13, 10, 26]);
    fs.writeFileSync(path.join(root, "a.bin"), bytes);
    fs.mkdirSync(path.join(root, "d", "deep"), { recursive: true });
    fs.writeFileSync(path.join(root, "d", "deep", "x.txt"), "deep\r\n");
    const svc = service(root);
    const before = await rev(svc, "a.bin");
    const out = await svc.moveFile({ workdir: "w", source: "a.bin", destination: "d\\b.bin", expected_revision: before });
    expect(out).toMatchObject({ source: "a.bin", destination: "d/b.bin", moved: true, type: "file", revision_before: before });
    expect(out.revision).toBe(await rev(svc, "d/b.bin"));
    expect(fs.existsSync(path.join(root, "a.bin"))).toBe(false);
    expect(fs.readFileSync(path.join(root, "d", "b.bin"))).toEqual(bytes);
    const inside = tree(path.join(root, "d"));
    const dir = await svc.moveFile({ workdir: "w", source: "d", destination: "e", expected_revision: await rev(svc, "d") });
    expect(dir.type).toBe("directory");
    expect(dir.revision).toBe(await rev(svc, "e"));
    expect(fs.existsSync(path.join(root, "d"))).toBe(false);
    expect(tree(path.join(root, "e"))).toEqual(inside);
    svc.close();
  });

  test("never overwrites: a file, a directory, another spelling of the same name", async () => {
    const { root } = fresh();
    fs.writeFileSync(path.join(root, "src.txt"), "SOURCE");
    fs.writeFileSync(path.join(root, "taken.txt"), "TAKEN");
    fs.mkdirSync(path.join(root, "dir"));
    const svc = service(root);
    const r = await rev(svc, "src.txt");
    const snap = tree(root);
    for (const dst of ["taken.txt", "TAKEN.TXT", "dir", "SRC.TXT"]) {
      await expectCode(svc.moveFile({ workdir: "w", source: "src.txt", destination: dst, expected_revision: r }), "PATH_ALREADY_EXISTS");
    }
    expect(tree(root)).toEqual(snap);
    svc.close();
  });

  test("a destination created right before the handle rename is refused by NTFS itself; both files keep their bytes", async () => {
    const { root } = fresh();
    fs.writeFileSync(path.join(root, "src.txt"), "SOURCE-BYTES");
    fs.mkdirSync(path.join(root, "d"));
    const real = fsNative();
    let raced = 0;
    const racing: FsNative = {
      ...real,
      renameNoReplace(srcDirFd, srcName, dstDirFd, dstName) {
        raced++;
        fs.writeFileSync(path.join(root, "d", "late.txt"), "INTRUDER");
        real.renameNoReplace(srcDirFd, srcName, dstDirFd, dstName);
      },
    };
    const svc = service(root, racing);
    await expectCode(svc.moveFile({ workdir: "w", source: "src.txt", destination: "d/late.txt", expected_revision: await rev(svc, "src.txt") }), "PATH_ALREADY_EXISTS");
    expect(raced).toBe(1);
    expect(fs.readFileSync(path.join(root, "src.txt"), "utf8")).toBe("SOURCE-BYTES");
    expect(fs.readFileSync(path.join(root, "d", "late.txt"), "utf8")).toBe("INTRUDER");
    svc.close();
  });

  test("the backend refuses an existing name itself (EEXIST) and renames between two held directory handles", () => {
    const { root } = fresh();
    for (const d of ["a", "b"]) fs.mkdirSync(path.join(root, d));
    fs.writeFileSync(path.join(root, "a", "f.txt"), "F");
    fs.writeFileSync(path.join(root, "b", "f.txt"), "G");
    const n = fsNative();
    const rootFd = n.openRoot(root);
    const a = n.openBeneath(rootFd, ["a"], "dirBase");
    const b = n.openBeneath(rootFd, ["b"], "dirBase");
    try {
      let code: string | undefined;
      try {
        n.renameNoReplace(a, "f.txt", b, "f.txt");
      } catch (err) {
        code = (err as { code?: string }).code;
      }
      expect(code).toBe("EEXIST");
      expect(fs.readFileSync(path.join(root, "b", "f.txt"), "utf8")).toBe("G");
      n.renameNoReplace(a, "f.txt", b, "g.txt");
      expect(fs.readdirSync(path.join(root, "a"))).toEqual([]);
      expect(fs.readFileSync(path.join(root, "b", "g.txt"), "utf8")).toBe("F");
    } finally {
      for (const fd of [a, b, rootFd]) fs.closeSync(fd);
    }
  });

  test("into its own subtree, Windows escapes and policy names: refused on both sides, nothing changes", async () => {
    const { base, root } = fresh();
    fs.mkdirSync(path.join(root, "d", "sub"), { recursive: true });
    fs.writeFileSync(path.join(root, "f.txt"), "F");
    fs.writeFileSync(path.join(root, "id_rsa"), "K");
    fs.mkdirSync(path.join(base, "outside"));
    const svc = service(root);
    const r = await rev(svc, "f.txt");
    const rd = await rev(svc, "d");
    const snap = tree(base);
    const cases: Array<[string, string, string]> = [
      ["d", "d\\sub\\x", "MOVE_INTO_SELF"],
      ["d", "D/SUB/x", "MOVE_INTO_SELF"],
      ["f.txt", "..\\outside\\f.txt", "PATH_OUTSIDE_WORKDIR"],
      ["..\\outside", "o", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "d\\..\\..\\f.txt", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "C:\\f.txt", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "C:f.txt", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "\\f.txt", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "\\\\server\\share\\f.txt", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "\\\\?\\C:\\f.txt", "PATH_OUTSIDE_WORKDIR"],
      [path.join(base, "outside"), "o", "PATH_OUTSIDE_WORKDIR"],
      ["f.txt", "f.txt:stream", "INVALID_NAME"],
      ["f.txt", "NUL.txt", "INVALID_NAME"],
      ["f.txt", "g.txt.", "INVALID_NAME"],
      ["f.txt", ".hidden", "HIDDEN_PATH_NOT_ALLOWED"],
      ["f.txt", "server.pem", "DENIED_PATH"],
      ["f.txt", "ID_ED25519", "DENIED_PATH"],
      ["ID_RSA", "key.txt", "DENIED_PATH"],
      ["f.txt", ".serverfs-tmp-0123456789abcdef", "RESERVED_PATH"],
      ["f.txt", "no\\such\\f.txt", "PARENT_NOT_FOUND"],
    ];
    for (const [source, destination, code] of cases) {
      const expected_revision = code === "MOVE_INTO_SELF" ? rd : r;
      const err = await expectCode(svc.moveFile({ workdir: "w", source, destination, expected_revision }), code as never);
      if (!source.includes(base) && !destination.includes(base)) expect(err.message).not.toContain(base);
    }
    expect(tree(base)).toEqual(snap);
    svc.close();
  });

  // Unix symlinks committed to the repository (test/platform/fixtures/wine-links): Wine follows
  // them even under FILE_OPEN_REPARSE_POINT, so this proves the backend's own check on both sides
  // of a move. Every move here is refused, so the committed fixture is never changed (asserted).
  test.skipIf(!underWine)("Unix symlinks seen through Wine: refused as source, as a parent and as the destination (Wine lane)", async () => {
    const fixture = WINE_LINKS_FIXTURE;
    const before = fs.readdirSync(fixture).sort();
    const svc = service(fixture);
    const r = await rev(svc, "a.txt");
    const cases: Array<[string, string]> = [
      ["file-link.txt", "moved.txt"],
      ["dir-link", "moved-dir"],
      ["dir-link\\b.txt", "b.txt"],
      ["out-link\\tools.md", "tools.md"],
      ["a.txt", "dir-link\\a.txt"],
      ["a.txt", "out-link\\a.txt"],
      ["a.txt", "file-link.txt"],
    ];
    for (const [source, destination] of cases) {
      await expectCode(svc.moveFile({ workdir: "w", source, destination, expected_revision: r }), "SYMLINK_NOT_ALLOWED");
    }
    expect(fs.readdirSync(fixture).sort()).toEqual(before);
    expect(fs.readFileSync(path.join(fixture, "a.txt"), "utf8")).toBe("plain\n");
    svc.close();
  });

  // Wine 8 cannot create symlinks or junctions on its Unix-backed drives, and has a single volume.
  test.skipIf(underWine)("an NTFS symlink or junction is never moved or moved through (real Windows)", async () => {
    const { base, root } = fresh();
    fs.mkdirSync(path.join(base, "outside"));
    fs.mkdirSync(path.join(root, "real"));
    fs.writeFileSync(path.join(root, "f.txt"), "F");
    fs.symlinkSync(path.join(base, "outside"), path.join(root, "jn"), "junction");
    const svc = service(root);
    const r = await rev(svc, "f.txt");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "jn\\f.txt", expected_revision: r }), "REPARSE_POINT_NOT_ALLOWED");
    // the junction itself is a name-surrogate, moved no more than a symlink: refused at the open,
    // before any revision is compared
    await expectCode(svc.moveFile({ workdir: "w", source: "jn", destination: "jn2", expected_revision: "v1:0000000000000000" }), "SYMLINK_NOT_ALLOWED");
    expect(fs.readdirSync(path.join(base, "outside"))).toEqual([]);
    expect(fs.readFileSync(path.join(root, "f.txt"), "utf8")).toBe("F");
    svc.close();
  });
});
