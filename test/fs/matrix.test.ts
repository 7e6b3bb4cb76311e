// Hidden × deny on every channel, reserved names, deny components (docs/security.md), and the
// precedence of read-only and binary switches over path policy.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode, physical, registry, tempDir, workdir, write } from "./helpers.ts";

const REV = "v1:0000000000000000";

function tree(): string {
  const root = path.join(tempDir(), "root");
  write(root, ".env", "TOKEN=abc-secret-marker\n");
  write(root, "visible.txt", "plain marker\n");
  write(root, ".hidden/notes.txt", "hidden marker\n");
  write(root, "internal/x.py", "internal marker\n");
  write(root, "docs/internal/deep.md", "deep internal marker\n");
  write(root, ".ssh/config", "ssh marker\n");
  write(root, "keys/server.pem", "pem marker\n");
  write(root, "sub/.serverfs-tmp-0123456789abcdef", "reserved marker\n");
  write(root, ".serverfs-disabled", "");
  return root;
}

/** Outcome code of each channel on one path: "OK" or the error code. */
async function channels(svc: FileService, p: string, rw: boolean): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const run = async (name: string, f: () => Promise<unknown>) => {
    try {
      await f();
      out[name] = "OK";
    } catch (err) {
      out[name] = (err as { code?: string }).code ?? "THROW";
    }
  };
  await run("read", () => svc.readTextFile({ workdir: "w", path: p }));
  await run("stat", () => svc.statFile({ workdir: "w", path: p }));
  await run("resource", () => svc.readResource({ workdir: "w", path: p }));
  if (rw) {
    await run("create", () => svc.createTextFile({ workdir: "w", path: `${p}.new`, content: "x" }));
    await run("edit", () => svc.editTextFile({ workdir: "w", path: p, expected_revision: REV, edits: [{ old_text: "a", new_text: "b" }] }));
    await run("delete", () => svc.deleteFile({ workdir: "w", path: p, expected_revision: REV }));
    await run("mkdir", () => svc.createDirectory({ workdir: "w", path: `${p}.d` }));
    await run("rmdir", () => svc.deleteDirectory({ workdir: "w", path: p, expected_revision: REV }));
  }
  return out;
}

function svcFor(root: string, over: Parameters<typeof workdir>[2]): FileService {
  return createFileService(registry([workdir("w", root, over)]));
}

describe("hidden × deny matrix on .env", () => {
  const cases = [
    { allow_hidden: false, disable_default_deny: false, want: "HIDDEN_PATH_NOT_ALLOWED" },
    { allow_hidden: false, disable_default_deny: true, want: "HIDDEN_PATH_NOT_ALLOWED" },
    { allow_hidden: true, disable_default_deny: false, want: "DENIED_PATH" },
    { allow_hidden: true, disable_default_deny: true, want: "OK" },
  ];
  for (const c of cases) {
    test(`allow_hidden=${c.allow_hidden} disable_default_deny=${c.disable_default_deny} → ${c.want}`, async () => {
      const root = tree();
      const svc = svcFor(root, { allow_hidden: c.allow_hidden, disable_default_deny: c.disable_default_deny });
      const res = await channels(svc, ".env", false);
      expect(res).toEqual({ read: c.want, stat: c.want, resource: c.want });
      // create/mkdir target `.env.new`/`.env.d`: hidden (and `.env.*` denied) by the same rules
      const mut = await channels(svc, ".env", true);
      for (const k of ["create", "mkdir"]) expect(mut[k]).toBe(c.want === "OK" ? "OK" : c.want);
      if (c.want !== "OK") for (const k of ["edit", "delete", "rmdir"]) expect(mut[k]).toBe(c.want);
      // listing / find / search agree
      const names = (await svc.listDirectory({ workdir: "w" })).entries.map((e) => e.name);
      expect(names.includes(".env")).toBe(c.want === "OK");
      const found = (await svc.findFiles({ workdir: "w", pattern: ".env" })).matches.map((m) => m.path);
      expect(found.includes(".env")).toBe(c.want === "OK");
      const hits = (await svc.searchText({ workdir: "w", query: "abc-secret-marker" })).matches.map((m) => m.path);
      expect(hits).toEqual(c.want === "OK" ? [".env"] : []);
    });
  }

  test("extra_deny_globs still block with default deny off", async () => {
    const svc = svcFor(tree(), { allow_hidden: true, disable_default_deny: true, extra_deny_globs: ["*.env", ".env"] });
    await expectCode(svc.readTextFile({ workdir: "w", path: ".env" }), "DENIED_PATH");
    await expectCode(svc.createTextFile({ workdir: "w", path: "prod.env", content: "x" }), "DENIED_PATH");
  });

  test("read-only beats path policy; binary-disabled beats path policy; RO beats binary-disabled", async () => {
    const root = tree();
    const svc = createFileService(registry([workdir("w", root, { read_only: true })]));
    await expectCode(svc.createTextFile({ workdir: "w", path: ".env", content: "x" }), "WORKDIR_READ_ONLY");
    await expectCode(svc.createTextFile({ workdir: "w", path: "../x", content: "x" }), "WORKDIR_READ_ONLY");
    await expectCode(svc.uploadBinaryFile({ workdir: "w", path: ".env", data_base64: null }), "WORKDIR_READ_ONLY");
    await expectCode(svc.downloadBinaryFile({ workdir: "w", path: ".env" }), "BINARY_TRANSFER_DISABLED");
    const rw = createFileService(registry([workdir("w", root)]));
    await expectCode(rw.uploadBinaryFile({ workdir: "w", path: ".env", data_base64: "AA==" }), "BINARY_TRANSFER_DISABLED");
    await expectCode(rw.createTextFile({ workdir: "nope", path: "x", content: "x" }), "WORKDIR_NOT_FOUND");
    // RO workdir still reports revisions
    expect((await svc.statFile({ workdir: "w", path: "visible.txt" })).revision).toMatch(/^v1:[0-9a-f]{16}$/);
  });
});

describe("deny components (docs/security.md)", () => {
  test("`internal` denies internal/x.py on every channel and a nested internal dir too", async () => {
    const root = tree();
    const svc = svcFor(root, { extra_deny_globs: ["internal"] });
    await expectCode(svc.readTextFile({ workdir: "w", path: "internal/x.py" }), "DENIED_PATH");
    await expectCode(svc.statFile({ workdir: "w", path: "internal" }), "DENIED_PATH");
    await expectCode(svc.readTextFile({ workdir: "w", path: "docs/internal/deep.md" }), "DENIED_PATH");
    await expectCode(svc.createTextFile({ workdir: "w", path: "internal/new.py", content: "x" }), "DENIED_PATH");
    await expectCode(svc.searchText({ workdir: "w", path: "internal", query: "marker" }), "DENIED_PATH");
    await expectCode(svc.findFiles({ workdir: "w", path: "docs/internal", pattern: "*" }), "DENIED_PATH");
    const hits = (await svc.searchText({ workdir: "w", query: "internal marker" })).matches;
    expect(hits).toEqual([]);
    const found = (await svc.findFiles({ workdir: "w", pattern: "*" })).matches.map((m) => m.path);
    expect(found.some((p) => p.includes("internal"))).toBe(false);
    expect(found).toContain("visible.txt");
    expect(fs.existsSync(path.join(root, "internal/new.py"))).toBe(false);
  });

  test("slash globs: internal/** and .ssh scoped search", async () => {
    const root = tree();
    const svc = svcFor(root, { allow_hidden: true, extra_deny_globs: ["internal/**"] });
    await expectCode(svc.readTextFile({ workdir: "w", path: "internal/x.py" }), "DENIED_PATH");
    await expectCode(svc.searchText({ workdir: "w", path: "internal", query: "marker" }), "DENIED_PATH");
    await expectCode(svc.searchText({ workdir: "w", path: ".ssh", query: "marker" }), "DENIED_PATH");
    // anchored: docs/internal is not internal/**
    expect((await svc.readTextFile({ workdir: "w", path: "docs/internal/deep.md" })).content).toBe("deep internal marker\n");
    const hits = (await svc.searchText({ workdir: "w", query: "marker" })).matches.map((m) => m.path).sort();
    expect(hits).toEqual([".hidden/notes.txt", "docs/internal/deep.md", "visible.txt"]);
  });
});

describe("reserved names", () => {
  test("invisible to list/find/search; RESERVED_PATH on every direct channel in the most permissive config", async () => {
    const root = tree();
    const svc = createFileService(registry([workdir("w", root, { allow_hidden: true, disable_default_deny: true, binary_transfer_enabled: true })]));
    for (const p of [".serverfs-tmp-0123456789abcdef", "sub/.serverfs-tmp-0123456789abcdef", ".serverfs-disabled", ".serverfs-tmp-x/child"]) {
      const res = await channels(svc, p, true);
      // `create`/`mkdir` in channels() target `<p>.new`/`<p>.d`, which is not reserved for the sentinel
      for (const [k, v] of Object.entries(res)) if (!(p === ".serverfs-disabled" && (k === "create" || k === "mkdir"))) expect(`${k}:${v}`).toBe(`${k}:RESERVED_PATH`);
      await expectCode(svc.createTextFile({ workdir: "w", path: p, content: "x" }), "RESERVED_PATH");
      await expectCode(svc.createDirectory({ workdir: "w", path: p }), "RESERVED_PATH");
      await expectCode(svc.downloadBinaryFile({ workdir: "w", path: p }), "RESERVED_PATH");
      await expectCode(svc.uploadBinaryFile({ workdir: "w", path: p, data_base64: "AA==" }), "RESERVED_PATH");
    }
    await expectCode(svc.searchText({ workdir: "w", path: "sub/.serverfs-tmp-0123456789abcdef", query: "x" }), "RESERVED_PATH");
    await expectCode(svc.listDirectory({ workdir: "w", path: ".serverfs-tmp-x" }), "RESERVED_PATH");
    const list = (await svc.listDirectory({ workdir: "w", path: "sub" })).entries;
    expect(list).toEqual([]);
    expect((await svc.listDirectory({ workdir: "w" })).entries.map((e) => e.name)).not.toContain(".serverfs-disabled");
    expect((await svc.findFiles({ workdir: "w", pattern: ".serverfs-tmp-*" })).matches).toEqual([]);
    expect((await svc.findFiles({ workdir: "w", pattern: ".serverfs-disabled" })).matches).toEqual([]);
    expect((await svc.searchText({ workdir: "w", query: "reserved marker" })).matches).toEqual([]);
    expect(physical(path.join(root, "sub"))).toEqual([".serverfs-tmp-0123456789abcdef"]);
    expect(fs.readFileSync(path.join(root, ".serverfs-disabled"), "utf8")).toBe("");
  });
});
