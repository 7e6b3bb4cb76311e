// move_file on real files: bytes, mode and identity survive; nothing is ever overwritten, not
// even by a destination that appears right before the kernel rename; every escape class of the
// other write tools is refused on the source and on the destination, in both resolver modes.
import { afterEach, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { forceResolver } from "../../platform/fs/linux.ts";
import { fsNative, type FsNative } from "../../platform/fs/native.ts";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode, read, registry, single, tempDir, workdir, write } from "./helpers.ts";

const linux = process.platform === "linux";

/** Every object under `dir`: type, bytes or link target, and mode. */
function tree(dir: string, rel = ""): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
    const r = rel === "" ? name : `${rel}/${name}`;
    const p = path.join(dir, r);
    const st = fs.lstatSync(p);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) out[r] = `link->${fs.readlinkSync(p)}`;
    else if (st.isDirectory()) Object.assign(out, { [r]: `dir ${mode}` }, tree(dir, r));
    else if (st.isFile()) out[r] = `file ${mode} ${fs.readFileSync(p).toString("hex")}`;
    else out[r] = `other ${mode} ${st.ino}`; // never opened: a fifo would block
  }
  return out;
}

async function rev(svc: FileService, p: string): Promise<string> {
  return (await svc.statFile({ workdir: "w", path: p })).revision;
}

afterEach(() => {
  if (linux) forceResolver(null);
});

describe("move_file", () => {
  test("a moved file keeps its bytes, mode and inode; the source is gone; revision == next stat", async () => {
    const { svc, root } = single();
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 10, 13, 10]);
    write(root, "a.bin", bytes, 0o640);
    write(root, "run.sh", "#!/bin/sh\necho hi\n", 0o755);
    fs.mkdirSync(path.join(root, "sub"));
    const ino = fs.statSync(path.join(root, "a.bin")).ino;
    const before = await rev(svc, "a.bin");
    const out = await svc.moveFile({ workdir: "w", source: "a.bin", destination: "sub/b.bin", expected_revision: before });
    expect(out).toEqual({ workdir: "w", source: "a.bin", destination: "sub/b.bin", moved: true, type: "file", revision_before: before, revision: out.revision });
    expect(out.revision).toBe(await rev(svc, "sub/b.bin"));
    expect(fs.existsSync(path.join(root, "a.bin"))).toBe(false);
    expect(read(root, "sub/b.bin").equals(bytes)).toBe(true);
    const st = fs.statSync(path.join(root, "sub/b.bin"));
    expect(st.mode & 0o7777).toBe(0o640);
    expect(st.ino).toBe(ino);
    // a rename in place keeps the exec bits too
    const r2 = await svc.moveFile({ workdir: "w", source: "run.sh", destination: "go.sh", expected_revision: await rev(svc, "run.sh") });
    expect(r2.type).toBe("file");
    expect(fs.statSync(path.join(root, "go.sh")).mode & 0o7777).toBe(0o755);
    expect(read(root, "go.sh").toString()).toBe("#!/bin/sh\necho hi\n");
    expect(fs.readdirSync(root).sort()).toEqual(["go.sh", "sub"]);
  });

  test("a directory moves with everything in it (hidden and denied children included, still refused at the new path)", async () => {
    const { svc, root } = single();
    write(root, "d/x.txt", "x\n");
    write(root, "d/deep/y.txt", "y\n", 0o600);
    write(root, "d/.env", "SECRET=1\n");
    const inside = tree(path.join(root, "d"));
    const before = await rev(svc, "d");
    const out = await svc.moveFile({ workdir: "w", source: "d", destination: "e", expected_revision: before });
    expect(out).toMatchObject({ source: "d", destination: "e", type: "directory", revision_before: before });
    expect(out.revision).toBe(await rev(svc, "e"));
    expect(fs.existsSync(path.join(root, "d"))).toBe(false);
    expect(tree(path.join(root, "e"))).toEqual(inside);
    await expectCode(svc.readTextFile({ workdir: "w", path: "e/.env" }), "HIDDEN_PATH_NOT_ALLOWED");
    // a trailing slash may name a directory source, not a file one
    fs.mkdirSync(path.join(root, "n"));
    await svc.moveFile({ workdir: "w", source: "e/", destination: "n/e", expected_revision: out.revision });
    expect(tree(path.join(root, "n/e"))).toEqual(inside);
  });

  test("revision: a stale token is REVISION_CONFLICT; for a directory, its own token (a direct child added or removed)", async () => {
    const { svc, root } = single();
    write(root, "f.txt", "one");
    const stale = await rev(svc, "f.txt");
    write(root, "f.txt", "two!");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "g.txt", expected_revision: stale }), "REVISION_CONFLICT");
    fs.mkdirSync(path.join(root, "d"));
    const dstale = await rev(svc, "d");
    await Bun.sleep(5);
    write(root, "d/new.txt", "x");
    await expectCode(svc.moveFile({ workdir: "w", source: "d", destination: "e", expected_revision: dstale }), "REVISION_CONFLICT");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "g.txt", expected_revision: "v1:0000000000000000" }), "REVISION_CONFLICT");
    await expectCode(svc.moveFile({ workdir: "w", source: "nope.txt", destination: "g.txt", expected_revision: stale }), "PATH_NOT_FOUND");
    expect(fs.readdirSync(root).sort()).toEqual(["d", "f.txt"]);
    expect(read(root, "f.txt").toString()).toBe("two!");
  });

  test("never overwrites: a file, a directory, a symlink or a dangling symlink at the destination", async () => {
    const base = tempDir();
    const root = path.join(base, "root");
    write(root, "src.txt", "SOURCE");
    write(root, "taken.txt", "TAKEN");
    write(root, "dir/inner.txt", "INNER");
    fs.mkdirSync(path.join(root, "emptydir"));
    fs.symlinkSync("taken.txt", path.join(root, "link"));
    fs.symlinkSync(path.join(base, "outside-new.txt"), path.join(root, "dangling"));
    const svc = createFileService(registry([workdir("w", root)]));
    const r = await rev(svc, "src.txt");
    const snap = tree(base);
    for (const dst of ["taken.txt", "dir", "emptydir", "link", "dangling", "src.txt"]) {
      await expectCode(svc.moveFile({ workdir: "w", source: "src.txt", destination: dst, expected_revision: r }), "PATH_ALREADY_EXISTS");
    }
    fs.mkdirSync(path.join(root, "d2"));
    const d2 = await rev(svc, "d2");
    await expectCode(svc.moveFile({ workdir: "w", source: "d2", destination: "emptydir", expected_revision: d2 }), "PATH_ALREADY_EXISTS");
    expect(tree(base)).toEqual({ ...snap, "root/d2": `dir ${(fs.statSync(path.join(root, "d2")).mode & 0o7777).toString(8)}` });
    expect(fs.existsSync(path.join(base, "outside-new.txt"))).toBe(false);
  });

  test("a destination that appears between the checks and the kernel rename is refused; both files keep their bytes", async () => {
    const { root } = single();
    write(root, "src.txt", "SOURCE-BYTES");
    write(root, "d/keep.txt", "other");
    const real = fsNative();
    let raced = 0;
    // The intruder is created by name right before the real no-replace rename runs: every check
    // of ours has already passed, so only the kernel's flag stands between it and an overwrite.
    const racing: FsNative = {
      ...real,
      renameNoReplace(srcDirFd, srcName, dstDirFd, dstName) {
        raced++;
        fs.writeFileSync(path.join(root, "d", "late.txt"), "INTRUDER");
        fs.mkdirSync(path.join(root, "late-dir"), { recursive: true });
        fs.writeFileSync(path.join(root, "late-dir", "inner"), "IN");
        real.renameNoReplace(srcDirFd, srcName, dstDirFd, dstName);
      },
    };
    const svc = createFileService(registry([workdir("w", root)]), { native: racing });
    const r = await rev(svc, "src.txt");
    await expectCode(svc.moveFile({ workdir: "w", source: "src.txt", destination: "d/late.txt", expected_revision: r }), "PATH_ALREADY_EXISTS");
    expect(raced).toBe(1);
    expect(read(root, "src.txt").toString()).toBe("SOURCE-BYTES");
    expect(read(root, "d/late.txt").toString()).toBe("INTRUDER");
    // a directory source against a directory that appears: not merged, not replaced
    fs.rmSync(path.join(root, "late-dir"), { recursive: true });
    write(root, "mv/a.txt", "A");
    await expectCode(svc.moveFile({ workdir: "w", source: "mv", destination: "late-dir", expected_revision: await rev(svc, "mv") }), "PATH_ALREADY_EXISTS");
    expect(read(root, "mv/a.txt").toString()).toBe("A");
    expect(fs.readdirSync(path.join(root, "late-dir"))).toEqual(["inner"]);
    expect(read(root, "late-dir/inner").toString()).toBe("IN");
  });

  test("the backend's renameNoReplace refuses an existing name itself (EEXIST) and moves between two held directories", () => {
    const { root } = single();
    write(root, "a/f.txt", "F");
    write(root, "b/f.txt", "G");
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
      expect(read(root, "a/f.txt").toString()).toBe("F");
      expect(read(root, "b/f.txt").toString()).toBe("G");
      n.renameNoReplace(a, "f.txt", b, "g.txt");
      expect(fs.readdirSync(path.join(root, "a"))).toEqual([]);
      expect(read(root, "b/g.txt").toString()).toBe("F");
    } finally {
      for (const fd of [a, b, rootFd]) fs.closeSync(fd);
    }
  });

  test("a directory cannot move into itself or below itself", async () => {
    const { svc, root } = single();
    write(root, "d/sub/deeper/f.txt", "x");
    const snap = tree(root);
    const r = await rev(svc, "d");
    for (const dst of ["d/inside", "d/sub/inside", "d/sub/deeper/inside", "d/./sub/x", "d/sub/../y"]) {
      await expectCode(svc.moveFile({ workdir: "w", source: "d", destination: dst, expected_revision: r }), "MOVE_INTO_SELF");
    }
    await expectCode(svc.moveFile({ workdir: "w", source: "d", destination: "d", expected_revision: r }), "PATH_ALREADY_EXISTS");
    expect(tree(root)).toEqual(snap);
  });

  test("argument and type refusals: root, symlink source, fifo, missing parent, file through a directory-only path", async () => {
    const { svc, root } = single();
    write(root, "f.txt", "F");
    fs.symlinkSync("f.txt", path.join(root, "link"));
    Bun.spawnSync(["mkfifo", path.join(root, "fifo")]);
    const r = await rev(svc, "f.txt");
    const snap = tree(root);
    await expectCode(svc.moveFile({ workdir: "w", source: "", destination: "x", expected_revision: r }), "ROOT_MUTATION_NOT_ALLOWED");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: ".", expected_revision: r }), "ROOT_MUTATION_NOT_ALLOWED");
    await expectCode(svc.moveFile({ workdir: "w", source: "link", destination: "l2", expected_revision: await rev(svc, "link") }), "SYMLINK_NOT_ALLOWED");
    await expectCode(svc.moveFile({ workdir: "w", source: "fifo", destination: "p2", expected_revision: await rev(svc, "fifo") }), "UNSUPPORTED_FILE_TYPE");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "no/such/dir/f.txt", expected_revision: r }), "PARENT_NOT_FOUND");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "f.txt/x", expected_revision: r }), "NOT_A_DIRECTORY");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt/", destination: "g.txt", expected_revision: r }), "INVALID_PATH");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "g.txt/", expected_revision: r }), "INVALID_PATH");
    await expectCode(svc.moveFile({ workdir: "nope", source: "f.txt", destination: "g.txt", expected_revision: r }), "WORKDIR_NOT_FOUND");
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "g.txt", expected_revision: 7 as unknown as string }), "INVALID_ARGUMENT");
    expect(tree(root)).toEqual(snap);
  });

  test("read-only workdir: WORKDIR_READ_ONLY, nothing moves", async () => {
    const { root } = single();
    write(root, "f.txt", "F");
    const svc = createFileService(registry([workdir("w", root, { read_only: true })]));
    await expectCode(svc.moveFile({ workdir: "w", source: "f.txt", destination: "g.txt", expected_revision: await rev(svc, "f.txt") }), "WORKDIR_READ_ONLY");
    expect(fs.readdirSync(root)).toEqual(["f.txt"]);
  });

  test("hidden, denied and reserved names are refused as source and as destination", async () => {
    const { svc, root } = single({ extra_deny_globs: ["secret-*"] });
    write(root, "f.txt", "F");
    write(root, ".hidden.txt", "H");
    write(root, "id_rsa", "K");
    write(root, "secret-plan.txt", "S");
    write(root, ".serverfs-tmp-0123456789abcdef", "T");
    fs.mkdirSync(path.join(root, ".git"));
    const r = await rev(svc, "f.txt");
    const snap = tree(root);
    const cases: Array<[string, string, string]> = [
      ["f.txt", ".hidden2.txt", "HIDDEN_PATH_NOT_ALLOWED"],
      ["f.txt", ".git/f.txt", "HIDDEN_PATH_NOT_ALLOWED"],
      ["f.txt", ".env", "HIDDEN_PATH_NOT_ALLOWED"],
      ["f.txt", "id_ed25519", "DENIED_PATH"],
      ["f.txt", "server.pem", "DENIED_PATH"],
      ["f.txt", "secret-new.txt", "DENIED_PATH"],
      ["f.txt", ".serverfs-tmp-ffffffffffffffff", "RESERVED_PATH"],
      ["f.txt", ".serverfs-disabled", "RESERVED_PATH"],
      [".hidden.txt", "visible.txt", "HIDDEN_PATH_NOT_ALLOWED"],
      ["id_rsa", "key.txt", "DENIED_PATH"],
      ["secret-plan.txt", "plan.txt", "DENIED_PATH"],
      [".serverfs-tmp-0123456789abcdef", "t.txt", "RESERVED_PATH"],
      [".git", "git", "HIDDEN_PATH_NOT_ALLOWED"],
    ];
    for (const [source, destination, code] of cases) {
      await expectCode(svc.moveFile({ workdir: "w", source, destination, expected_revision: r }), code as never);
    }
    expect(tree(root)).toEqual(snap);
  });

  test("deny rules with '/': files still move (both paths checked), directories are refused", async () => {
    const { svc, root } = single({ extra_deny_globs: ["build/out/**", "private/*.md"] });
    write(root, "build/out/x.txt", "X");
    write(root, "notes.md", "N");
    fs.mkdirSync(path.join(root, "private"));
    const snap = tree(root);
    await expectCode(svc.moveFile({ workdir: "w", source: "build", destination: "b2", expected_revision: await rev(svc, "build") }), "DENIED_PATH");
    await expectCode(svc.moveFile({ workdir: "w", source: "notes.md", destination: "private/notes.md", expected_revision: await rev(svc, "notes.md") }), "DENIED_PATH");
    expect(tree(root)).toEqual(snap);
    await svc.moveFile({ workdir: "w", source: "notes.md", destination: "private/notes.txt", expected_revision: await rev(svc, "notes.md") });
    expect(read(root, "private/notes.txt").toString()).toBe("N");
  });

  for (const mode of linux ? (["openat2", "walk"] as const) : (["native"] as const)) {
    test(`escapes on both sides refused, nothing inside or outside changes (${mode})`, async () => {
      if (mode !== "native") forceResolver(mode);
      const base = tempDir();
      const root = path.join(base, "root");
      const outside = path.join(base, "outside");
      const other = path.join(base, "other");
      write(root, "f.txt", "INSIDE");
      write(root, "real/in.txt", "REAL");
      write(outside, "secret.txt", "OUTSIDE");
      write(other, "o.txt", "OTHER");
      write(base, "root-evil/e.txt", "EVIL"); // a sibling whose name extends the root's
      fs.symlinkSync(outside, path.join(root, "out"));
      fs.symlinkSync(other, path.join(root, "to-other"));
      fs.symlinkSync("real", path.join(root, "inlink"));
      const svc = createFileService(registry([workdir("w", root), workdir("o", other)]));
      const r = await rev(svc, "f.txt");
      const snap = tree(base);
      const cases: Array<[string, string, string]> = [
        ["../outside/secret.txt", "stolen.txt", "PATH_OUTSIDE_WORKDIR"],
        ["f.txt", "../outside/f.txt", "PATH_OUTSIDE_WORKDIR"],
        ["f.txt", "../other/f.txt", "PATH_OUTSIDE_WORKDIR"],
        ["f.txt", "real/../../f.txt", "PATH_OUTSIDE_WORKDIR"],
        [path.join(outside, "secret.txt"), "stolen.txt", "PATH_OUTSIDE_WORKDIR"],
        ["f.txt", path.join(outside, "f.txt"), "PATH_OUTSIDE_WORKDIR"],
        ["f.txt", path.join(root, "g.txt"), "PATH_OUTSIDE_WORKDIR"],
        ["~/x", "y", "PATH_OUTSIDE_WORKDIR"],
        ["../root-evil/e.txt", "e.txt", "PATH_OUTSIDE_WORKDIR"],
        ["f.txt", "../root-evil/f.txt", "PATH_OUTSIDE_WORKDIR"],
        ["f.txt\0../x", "g.txt", "ACCESS_DENIED"],
        ["f.txt", "g.txt\0", "ACCESS_DENIED"],
        ["f.txt", "x/".repeat(2100), "INVALID_NAME"],
        ["f.txt", "~/f.txt", "PATH_OUTSIDE_WORKDIR"],
        ["out/secret.txt", "stolen.txt", "SYMLINK_NOT_ALLOWED"],
        ["f.txt", "out/f.txt", "SYMLINK_NOT_ALLOWED"],
        ["f.txt", "to-other/f.txt", "SYMLINK_NOT_ALLOWED"],
        ["inlink/in.txt", "in.txt", "SYMLINK_NOT_ALLOWED"],
        ["f.txt", "inlink/f.txt", "SYMLINK_NOT_ALLOWED"],
        ["out", "moved-link", "SYMLINK_NOT_ALLOWED"],
        ["f.txt", "out", "PATH_ALREADY_EXISTS"],
      ];
      for (const [source, destination, code] of cases) {
        const err = await expectCode(svc.moveFile({ workdir: "w", source, destination, expected_revision: r }), code as never);
        if (!source.includes(base) && !destination.includes(base)) expect(err.message).not.toContain(base);
      }
      // the other workdir's own alias names only its own tree
      await expectCode(svc.moveFile({ workdir: "o", source: "o.txt", destination: "../root/o.txt", expected_revision: r }), "PATH_OUTSIDE_WORKDIR");
      expect(tree(base)).toEqual(snap);
    });
  }
});

describe.skipIf(!linux)("move_file across mounts (Linux mount namespace)", () => {
  test("another filesystem or a bind mount: CROSS_DEVICE_MOVE with cross_mounts, MOUNT_CROSSING_NOT_ALLOWED without; nothing copied", () => {
    const base = tempDir("serverfs-move-mounts-");
    write(base, "root/f.txt", "FILE");
    write(base, "root/d/x.txt", "DIR");
    fs.mkdirSync(path.join(base, "root/mnt"));
    fs.mkdirSync(path.join(base, "root/bind"));
    fs.mkdirSync(path.join(base, "other"));
    const unshare = process.getuid?.() === 0 ? ["unshare", "-m", "--propagation", "private"] : ["unshare", "-rm", "--propagation", "private"];
    const p = Bun.spawnSync([...unshare, process.execPath, path.join(import.meta.dir, "fixtures/move-mounts-child.ts"), base], { stderr: "pipe" });
    if (p.exitCode !== 0) throw new Error(`mount child failed (${p.exitCode}): ${p.stderr.toString().slice(0, 2000)}`);
    const out = JSON.parse(p.stdout.toString().trim().split("\n").pop() as string);
    expect(out).toEqual({
      "true:f.txt->mnt/f.txt": { code: "CROSS_DEVICE_MOVE" },
      "true:f.txt->bind/f.txt": { code: "CROSS_DEVICE_MOVE" },
      "true:d->mnt/d": { code: "CROSS_DEVICE_MOVE" },
      "true:mnt/m.txt->m.txt": { code: "CROSS_DEVICE_MOVE" },
      "false:f.txt->mnt/f.txt": { code: "MOUNT_CROSSING_NOT_ALLOWED" },
      "false:f.txt->bind/f.txt": { code: "MOUNT_CROSSING_NOT_ALLOWED" },
      "false:d->mnt/d": { code: "MOUNT_CROSSING_NOT_ALLOWED" },
      "false:mnt/m.txt->m.txt": { code: "MOUNT_CROSSING_NOT_ALLOWED" },
      files: { "f.txt": "FILE", "d/x.txt": "DIR", "mnt/m.txt": "MOUNTED", mnt: ["m.txt"], bind: [] },
    });
  });
});

// The race test's attacker (fixtures/swapper.ts) swaps `swap` for a symlink to an outside tree
// holding the same names, with atomic renames, while moves run into, out of and within `swap`:
// nothing outside may change and nothing from outside may arrive in the workdir.
const RACE_ATTEMPTS = 1500;
/** Upper bound when the swapper is so fast that few moves land between its swaps. */
const RACE_MAX_ATTEMPTS = 30_000;
const RACE_CODES = new Set(["SYMLINK_NOT_ALLOWED", "PATH_NOT_FOUND", "PARENT_NOT_FOUND", "REVISION_CONFLICT", "NOT_A_DIRECTORY", "PATH_ALREADY_EXISTS"]);
for (const mode of ["openat2", "walk"] as const) {
  test.skipIf(!linux)(`moves against a live directory/symlink swapper change nothing outside (${mode})`, async () => {
    forceResolver(mode);
    const base = tempDir();
    const root = path.join(base, "root");
    const outside = path.join(base, "outside");
    const marker = `OUTSIDE-${crypto.randomUUID()}`;
    for (const rel of ["a.txt", "b.txt", "top.txt", "sub/x.txt", "sub2/x.txt"]) write(outside, rel, marker);
    write(root, "swap/a.txt", "inside a");
    write(root, "swap/sub/x.txt", "inside x");
    write(root, "top.txt", "inside top");
    fs.symlinkSync(outside, path.join(root, "swap.link"));
    const before = tree(outside);
    const svc = createFileService(registry([workdir("w", root)]));
    const attacker = Bun.spawn([process.execPath, path.join(import.meta.dir, "fixtures/swapper.ts"), root], { stdout: "ignore", stderr: "ignore" });
    try {
      const t0 = Date.now();
      while (!fs.existsSync(path.join(base, "swaps")) && Date.now() - t0 < 10_000) await Bun.sleep(5);
      const codes = new Map<string, number>();
      let ok = 0;
      const pairs: Array<[string, string]> = [
        ["swap/a.txt", "swap/b.txt"],
        ["swap/b.txt", "swap/a.txt"],
        ["top.txt", "swap/top.txt"],
        ["swap/top.txt", "top.txt"],
        ["swap/sub", "swap/sub2"],
        ["swap/sub2", "swap/sub"],
      ];
      // at least RACE_ATTEMPTS, and on until both outcomes were seen a few times
      for (let i = 0; i < RACE_MAX_ATTEMPTS && (i < RACE_ATTEMPTS || ok < 10 || (codes.get("SYMLINK_NOT_ALLOWED") ?? 0) < 10); i++) {
        const [source, destination] = pairs[i % pairs.length] as [string, string];
        try {
          const revision = (await svc.statFile({ workdir: "w", path: source })).revision;
          await svc.moveFile({ workdir: "w", source, destination, expected_revision: revision });
          ok++;
        } catch (err) {
          const code = (err as { code?: string }).code ?? String(err);
          if (!RACE_CODES.has(code)) throw err;
          expect((err as Error).message).not.toContain(base);
          codes.set(code, (codes.get(code) ?? 0) + 1);
        }
      }
      attacker.kill("SIGKILL");
      await attacker.exited;
      expect(tree(outside)).toEqual(before);
      const inside = tree(root);
      expect(Object.entries(inside).filter(([, v]) => v.includes(Buffer.from(marker).toString("hex")))).toEqual([]);
      // every inside file still exists exactly once, somewhere inside
      const bytes = Object.values(inside).filter((v) => v.startsWith("file")).map((v) => Buffer.from(v.split(" ")[2] as string, "hex").toString());
      expect(bytes.sort()).toEqual(["inside a", "inside top", "inside x"]);
      expect(ok).toBeGreaterThan(0);
      expect(codes.get("SYMLINK_NOT_ALLOWED") ?? 0).toBeGreaterThan(0);
      svc.close();
    } finally {
      attacker.kill("SIGKILL");
    }
  }, 60_000);
}
