// Traversal, symlinks and the escape classes of other filesystem MCP servers, run once with the
// kernel resolver (openat2) and once with the O_NOFOLLOW component walk used on kernels < 5.6.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { forceResolver, hasOpenat2 } from "../../platform/fs/linux.ts";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode, physical, read, registry, tempDir, workdir, write } from "./helpers.ts";

const linux = process.platform === "linux";

for (const mode of ["openat2", "walk"] as const) {
  describe.skipIf(!linux)(`confinement (${mode})`, () => {
    let base: string;
    let root: string;
    let outside: string;
    let svc: FileService;

    beforeAll(() => {
      forceResolver(mode);
      base = tempDir();
      root = path.join(base, "allowed");
      outside = path.join(base, "outside");
      fs.mkdirSync(root);
      fs.mkdirSync(outside);
      // the sibling-prefix trap: /allowed vs /allowed-evil
      fs.mkdirSync(path.join(base, "allowed-evil"));
      write(base, "allowed-evil/secret.txt", "EVIL-MARKER\n");
      write(outside, "secret.txt", "OUTSIDE-MARKER\n");
      write(root, "sub/f.txt", "inside\n");
      write(root, "real/target.txt", "target\n");
      fs.symlinkSync(outside, path.join(root, "out"));
      fs.symlinkSync("../allowed-evil", path.join(root, "evil"));
      fs.symlinkSync("real", path.join(root, "inlink")); // in-workdir link: still refused
      fs.symlinkSync("real/target.txt", path.join(root, "filelink"));
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "outfile"));
      fs.symlinkSync("/etc", path.join(root, "etc"));
      fs.symlinkSync(path.join(outside, "nothing-yet"), path.join(root, "dangling"));
      svc = createFileService(registry([workdir("w", root, { binary_transfer_enabled: true })]));
    });
    afterAll(() => {
      svc.close();
      forceResolver(null);
    });

    test("the resolver mode is the one under test", () => {
      expect(hasOpenat2()).toBe(mode === "openat2");
    });

    test("lexical escapes", async () => {
      for (const p of ["../outside/secret.txt", "../../etc/passwd", "/etc/passwd", "~/x", "sub/../../allowed-evil/secret.txt", "../allowed-evil/secret.txt"]) {
        await expectCode(svc.readTextFile({ workdir: "w", path: p }), "PATH_OUTSIDE_WORKDIR");
        await expectCode(svc.createTextFile({ workdir: "w", path: p, content: "x" }), "PATH_OUTSIDE_WORKDIR");
      }
      await expectCode(svc.readTextFile({ workdir: "w", path: "sub/\0f.txt" }), "ACCESS_DENIED");
      expect(physical(outside)).toEqual(["secret.txt"]);
      expect(physical(path.join(base, "allowed-evil"))).toEqual(["secret.txt"]);
    });

    test("root spellings list the root; root mutations refused for every spelling", async () => {
      for (const p of ["", ".", "./", "sub/.."]) {
        const r = await svc.listDirectory({ workdir: "w", path: p });
        expect(r.path).toBe("");
        expect(r.entries.map((e) => e.name)).toContain("sub");
        await expectCode(svc.createTextFile({ workdir: "w", path: p, content: "x" }), "ROOT_MUTATION_NOT_ALLOWED");
        await expectCode(svc.editTextFile({ workdir: "w", path: p, expected_revision: "v1:0000000000000000", edits: [{ old_text: "a", new_text: "b" }] }), "ROOT_MUTATION_NOT_ALLOWED");
        await expectCode(svc.deleteFile({ workdir: "w", path: p, expected_revision: "v1:0000000000000000" }), "ROOT_MUTATION_NOT_ALLOWED");
        await expectCode(svc.createDirectory({ workdir: "w", path: p }), "ROOT_MUTATION_NOT_ALLOWED");
        await expectCode(svc.deleteDirectory({ workdir: "w", path: p, expected_revision: "v1:0000000000000000" }), "ROOT_MUTATION_NOT_ALLOWED");
        await expectCode(svc.uploadBinaryFile({ workdir: "w", path: p, data_base64: "AA==" }), "ROOT_MUTATION_NOT_ALLOWED");
      }
    });

    test("a symlink in a parent component is refused on every channel, inside or outside targets alike", async () => {
      for (const p of ["out/secret.txt", "evil/secret.txt", "inlink/target.txt", "etc/passwd"]) {
        await expectCode(svc.readTextFile({ workdir: "w", path: p }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.statFile({ workdir: "w", path: p }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.readResource({ workdir: "w", path: p }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.downloadBinaryFile({ workdir: "w", path: p }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.editTextFile({ workdir: "w", path: p, expected_revision: "v1:0000000000000000", edits: [{ old_text: "a", new_text: "b" }] }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.deleteFile({ workdir: "w", path: p, expected_revision: "v1:0000000000000000" }), "SYMLINK_NOT_ALLOWED");
      }
      for (const p of ["out", "evil", "inlink", "etc"]) {
        await expectCode(svc.listDirectory({ workdir: "w", path: p }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.findFiles({ workdir: "w", path: p, pattern: "*" }), "SYMLINK_NOT_ALLOWED");
        await expectCode(svc.searchText({ workdir: "w", path: p, query: "MARKER" }), "SYMLINK_NOT_ALLOWED");
      }
    });

    test("writes through a symlinked or not-yet-existing parent create nothing anywhere", async () => {
      await expectCode(svc.createTextFile({ workdir: "w", path: "out/new.txt", content: "x" }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.createTextFile({ workdir: "w", path: "evil/new.txt", content: "x" }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.createDirectory({ workdir: "w", path: "out/newdir" }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "out/new.bin", data_base64: "AA==" }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.createTextFile({ workdir: "w", path: "missing/deeper/new.txt", content: "x" }), "PARENT_NOT_FOUND");
      await expectCode(svc.createDirectory({ workdir: "w", path: "missing/newdir" }), "PARENT_NOT_FOUND");
      await expectCode(svc.createTextFile({ workdir: "w", path: "sub/f.txt/new.txt", content: "x" }), "NOT_A_DIRECTORY");
      // a dangling link's target must not come into existence by writing through it
      await expectCode(svc.createTextFile({ workdir: "w", path: "dangling", content: "x" }), "PATH_ALREADY_EXISTS");
      await expectCode(svc.createTextFile({ workdir: "w", path: "dangling/x.txt", content: "x" }), "SYMLINK_NOT_ALLOWED");
      expect(physical(outside)).toEqual(["secret.txt"]);
      expect(physical(path.join(base, "allowed-evil"))).toEqual(["secret.txt"]);
      expect(fs.existsSync(path.join(root, "missing"))).toBe(false);
      expect(physical(path.join(root, "sub"))).toEqual(["f.txt"]);
    });

    test("a final symlink: stat reports it with a revision; content channels refuse it; it survives", async () => {
      const st = await svc.statFile({ workdir: "w", path: "outfile" });
      expect(st.type).toBe("symlink");
      expect(st.size).toBeNull();
      expect(st.mime_type).toBeNull();
      expect(st.revision).toMatch(/^v1:[0-9a-f]{16}$/);
      expect((await svc.statFile({ workdir: "w", path: "outfile" })).revision).toBe(st.revision);
      await expectCode(svc.readTextFile({ workdir: "w", path: "outfile" }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.downloadBinaryFile({ workdir: "w", path: "outfile" }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.editTextFile({ workdir: "w", path: "outfile", expected_revision: st.revision, edits: [{ old_text: "OUTSIDE", new_text: "PWNED" }] }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.deleteFile({ workdir: "w", path: "outfile", expected_revision: st.revision }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: "outfile", data_base64: "AA==", overwrite: true, expected_revision: st.revision }), "SYMLINK_NOT_ALLOWED");
      await expectCode(svc.createTextFile({ workdir: "w", path: "outfile", content: "x" }), "PATH_ALREADY_EXISTS");
      await expectCode(svc.deleteDirectory({ workdir: "w", path: "out", expected_revision: st.revision }), "SYMLINK_NOT_ALLOWED");
      expect(fs.lstatSync(path.join(root, "outfile")).isSymbolicLink()).toBe(true);
      expect(fs.lstatSync(path.join(root, "out")).isSymbolicLink()).toBe(true);
      expect(read(outside, "secret.txt").toString()).toBe("OUTSIDE-MARKER\n");
    });

    test("listing shows symlinks without following them or revealing targets", async () => {
      const r = await svc.listDirectory({ workdir: "w" });
      const byName = new Map(r.entries.map((e) => [e.name, e]));
      expect(byName.get("out")?.type).toBe("symlink");
      expect(byName.get("filelink")?.type).toBe("symlink");
      expect(byName.get("filelink")?.size).toBeNull();
      expect(JSON.stringify(r)).not.toContain(outside);
    });

    test("find never enters symlinked dirs; search never reads through a symlink", async () => {
      const f = await svc.findFiles({ workdir: "w", pattern: "*.txt" });
      expect(f.matches.map((m) => m.path).sort()).toEqual(["real/target.txt", "sub/f.txt"]);
      const s = await svc.searchText({ workdir: "w", query: "MARKER" });
      expect(s.matches).toEqual([]);
      const t = await svc.searchText({ workdir: "w", query: "target" });
      expect(t.matches).toEqual([{ path: "real/target.txt", line: 1, text: "target" }]);
    });

    test("errors never carry a host path", async () => {
      const errs: string[] = [];
      for (const p of ["out/secret.txt", "missing/x", "sub/f.txt/x", "../x"]) {
        try {
          await svc.readTextFile({ workdir: "w", path: p });
        } catch (err) {
          errs.push(String((err as Error).message));
        }
      }
      expect(errs.length).toBe(4);
      for (const e of errs) {
        expect(e).not.toContain(base);
        expect(e.startsWith("w:")).toBe(true);
      }
    });
  });
}

describe.skipIf(!linux)("workdir root", () => {
  test("a root that is a symlink is refused; a missing root is PATH_NOT_FOUND", async () => {
    const base = tempDir();
    fs.mkdirSync(path.join(base, "real"));
    fs.symlinkSync(path.join(base, "real"), path.join(base, "link"));
    const svc = createFileService(registry([workdir("l", path.join(base, "link")), workdir("m", path.join(base, "missing"))]));
    await expectCode(svc.listDirectory({ workdir: "l" }), "SYMLINK_NOT_ALLOWED");
    await expectCode(svc.listDirectory({ workdir: "m" }), "PATH_NOT_FOUND");
    await expectCode(svc.listDirectory({ workdir: "nope" }), "WORKDIR_NOT_FOUND");
  });
});
