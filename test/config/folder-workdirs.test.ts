// `serve --workdir-ro DIR ... --workdir-rw DIR ...`: folders whose alias is their own name. The pure
// mapping, then a real `serve` started with the argument shape an MCP Bundle host produces (a
// picked list expanded into separate arguments, an empty list leaving the bare flag), asked
// through MCP which workdirs it serves and whether they are writable.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aliasFromFolder, folderWorkdirSpecs } from "../../src/config/folder-workdirs.ts";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import { connectServe } from "../support/mcp.ts";
import { runCli } from "../support/proc.ts";

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-folders-")));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe("aliasFromFolder", () => {
  test("the last path component, fitted to the alias grammar", () => {
    expect(aliasFromFolder("/home/ann/docs")).toBe("docs");
    expect(aliasFromFolder("/home/ann/docs/")).toBe("docs");
    expect(aliasFromFolder("C:\\Users\\Ann\\My Projects")).toBe("My-Projects");
    expect(aliasFromFolder("/srv/2024 notes")).toBe("notes");
    expect(aliasFromFolder("/srv/.config")).toBe("config");
    expect(aliasFromFolder("/srv/日本語")).toBe("folder");
    expect(aliasFromFolder("/")).toBe("folder");
    expect(aliasFromFolder(`/srv/${"a".repeat(40)}`)).toBe("a".repeat(32));
  });
});

describe("folderWorkdirSpecs", () => {
  test("read-only first, every spec with its mode, duplicates numbered without regard to case", () => {
    expect(
      folderWorkdirSpecs({ readOnly: ["/a/docs", "/b/Docs", "/c/notes:rw"], readWrite: ["/d/docs", "/e/app"] }, ["app"]),
    ).toEqual(["docs=/a/docs:ro", "Docs-2=/b/Docs:ro", "notes-rw=/c/notes:rw:ro", "docs-3=/d/docs:rw", "app-2=/e/app:rw"]);
  });

  test("a numbered alias still fits 32 characters", () => {
    const long = "x".repeat(32);
    expect(folderWorkdirSpecs({ readOnly: [`/a/${long}`, `/b/${long}`], readWrite: [] })).toEqual([
      `${long}=/a/${long}:ro`,
      `${"x".repeat(30)}-2=/b/${long}:ro`,
    ]);
  });

  test("the specs load through the --workdir rules: a folder named like a mode keeps its name", async () => {
    const specs = folderWorkdirSpecs({ readOnly: ["/srv/notes:rw"], readWrite: ["/srv/app"] });
    const { registry } = await registryFromWorkdirArgs(specs, "/home/ann");
    expect(registry.workdirs.map((w) => [w.alias, w.path, w.read_only])).toEqual([
      ["notes-rw", "/srv/notes:rw", true],
      ["app", "/srv/app", false],
    ]);
  });
});

describe("serve with bundle-style folder arguments", () => {
  test("lists the picked folders under their names, read-only and read-write", async () => {
    for (const d of ["one/docs", "two/docs", "work/app"]) fs.mkdirSync(path.join(base, d), { recursive: true });
    const serve = await connectServe({
      args: ["--config", "--workdir-ro", path.join(base, "one/docs"), path.join(base, "two/docs"), "--workdir-rw", path.join(base, "work/app")],
    });
    try {
      const listed = await serve.call("list_workdirs");
      const workdirs = (listed.structuredContent as { workdirs: { alias: string; access: string }[] }).workdirs;
      expect(workdirs.map((w) => [w.alias, w.access])).toEqual([
        ["docs", "read-only"],
        ["docs-2", "read-only"],
        ["app", "read-write"],
      ]);
      const wrote = await serve.call("create_text_file", { workdir: "app", path: "hello.txt", content: "hi\n" });
      expect(wrote.isError ?? false).toBe(false);
      expect(fs.readFileSync(path.join(base, "work/app/hello.txt"), "utf8")).toBe("hi\n");
      const refused = await serve.call("create_text_file", { workdir: "docs", path: "x.txt", content: "no\n" });
      expect(refused.isError).toBe(true);
      expect(fs.existsSync(path.join(base, "one/docs/x.txt"))).toBe(false);
    } finally {
      await serve.close();
    }
  }, 30_000);

  test("empty lists and no config file: a usage error naming every way to give workdirs", () => {
    const r = runCli(["serve", "--config", "--workdir-ro", "--workdir-rw"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "serverfs: serve: USAGE_ERROR: serve needs --config FILE, --env-file FILE, or at least one --workdir ALIAS=PATH[:rw], --workdir-ro DIR or --workdir-rw DIR\n",
    );
  });

  test("a config file together with folders, and two config files, are refused", () => {
    const both = runCli(["serve", "--config", "a.toml", "--workdir-ro", base]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe("serverfs: serve: USAGE_ERROR: give one of --config FILE, --env-file FILE or workdirs, not several\n");
    const two = runCli(["serve", "--config", "a.toml", "b.toml"]);
    expect(two.code).toBe(2);
    expect(two.stderr).toBe("serverfs: serve: USAGE_ERROR: give one --config FILE\n");
  });
});
