// A leading `~` on the command line: the pure rule, `--workdir` through the loader, and every
// path flag through the real CLI with HOME pointing at a temp directory (so no real home is used).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { expandHome, hasHomePrefix, HomeUnavailableError } from "../../src/config/home-path.ts";
import { registryFromWorkdirArgs } from "../../src/config/load.ts";
import { ServerfsError } from "../../src/errors.ts";
import { bareEnv, connectServe } from "../support/mcp.ts";
import { runCli } from "../support/proc.ts";
import { cleanupTempDirs, tempDir, wd } from "./helpers.ts";

afterAll(cleanupTempDirs);
// Real processes on a shared 2-core machine: a bound, not a timing assertion.
setDefaultTimeout(60_000);

const posixHome = { home: "/home/ann", windows: false };
const windowsHome = { home: "C:\\Users\\ann", windows: true };

describe("expandHome", () => {
  test.each([
    ["~", "/home/ann"],
    ["~/", "/home/ann/"],
    ["~/docs", "/home/ann/docs"],
    ["~/a b/c", "/home/ann/a b/c"],
    ["~//x", "/home/ann//x"],
  ])("POSIX %j -> %j", (given, expected) => {
    expect(expandHome(given, posixHome)).toBe(expected);
  });

  test.each(["~ann/docs", "~root", "~~", "~.", "~\\docs", "docs/~", "./~/x", "x~/y", "", "/abs", " ~/x"])(
    "POSIX %j is left as given",
    (given) => {
      expect(hasHomePrefix(given, false)).toBe(false);
      expect(expandHome(given, posixHome)).toBe(given);
    },
  );

  test.each([
    ["~", "C:\\Users\\ann"],
    ["~\\docs", "C:\\Users\\ann\\docs"],
    ["~/docs", "C:\\Users\\ann/docs"],
  ])("Windows %j -> %j", (given, expected) => {
    expect(expandHome(given, windowsHome)).toBe(expected);
  });

  test("Windows never expands ~name either", () => {
    expect(expandHome("~ann\\docs", windowsHome)).toBe("~ann\\docs");
  });

  test("a home directory that ends in a separator gives one separator", () => {
    expect(expandHome("~/x", { home: "/", windows: false })).toBe("/x");
    expect(expandHome("~/x", { home: "/home/ann/", windows: false })).toBe("/home/ann/x");
    expect(expandHome("~\\x", { home: "C:\\", windows: true })).toBe("C:\\x");
  });

  test("no usable home directory: a ~ to expand is refused, anything else passes", () => {
    for (const home of ["", "relative/home"]) {
      expect(() => expandHome("~/x", { home, windows: false })).toThrow(HomeUnavailableError);
      expect(expandHome("/x", { home, windows: false })).toBe("/x");
      expect(expandHome("~ann", { home, windows: false })).toBe("~ann");
    }
  });
});

describe("--workdir with ~", () => {
  test("~ and ~/ become the home directory, with or without :rw/:ro; ~name stays a relative name", async () => {
    const { registry } = await registryFromWorkdirArgs(
      ["docs=~/docs", "home=~:rw", "ro=~/ro:ro", "other=~ann/x"],
      "/srv/checkout",
      posixHome,
    );
    expect(registry.workdirs.map((w) => [w.alias, w.path, w.read_only])).toEqual([
      ["docs", "/home/ann/docs", true],
      ["home", "/home/ann", false],
      ["ro", "/home/ann/ro", true],
      ["other", "/srv/checkout/~ann/x", true],
    ]);
  });

  test("a '..' is refused before expansion; an unusable home is a CONFIGURATION_ERROR naming the workdir", async () => {
    for (const [specs, home, text] of [
      [["a=~/../etc"], posixHome, "--workdir: #1.path: must not contain a '..' component"],
      [["a=/ok", "b=~/x"], { home: "", windows: false }, "--workdir: #2.path: the home directory is unknown"],
    ] as const) {
      let caught: unknown;
      try {
        await registryFromWorkdirArgs(specs, "/srv", home);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ServerfsError);
      expect((caught as ServerfsError).code).toBe("CONFIGURATION_ERROR");
      expect((caught as ServerfsError).message).toContain(text);
    }
  });
});

describe("path flags through the real CLI (HOME is a temp directory)", () => {
  function home(): { dir: string; env: Record<string, string> } {
    const dir = tempDir();
    return { dir, env: { ...bareEnv(dir), SERVERFS_DEBUG: "" } };
  }

  test("render-config --config ~/x.toml --out ~/out.json reads and writes under HOME", () => {
    const h = home();
    fs.writeFileSync(path.join(h.dir, "x.toml"), wd("docs", "/srv/docs"));
    const r = runCli(["render-config", "--config", "~/x.toml", "--out", "~/out.json"], { cwd: tempDir(), env: h.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(h.dir, "out.json"), "utf8")).workdirs[0].alias).toBe("docs");
  });

  test("render-config --env-file ~/x.env reads the file under HOME", () => {
    const h = home();
    fs.writeFileSync(path.join(h.dir, "x.env"), "WORKDIR_01_ALIAS=docs\nWORKDIR_01_PATH=/srv/docs\n");
    const r = runCli(["render-config", "--env-file", "~/x.env"], { cwd: tempDir(), env: h.env });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout).workdirs[0].alias).toBe("docs");
  });

  test("an error about a ~ path names the expanded file", () => {
    const h = home();
    const r = runCli(["render-config", "--config", "~/missing.toml"], { cwd: tempDir(), env: h.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`serverfs: render-config: CONFIGURATION_ERROR: ${path.join(h.dir, "missing.toml")}: not found; fix: check the path, or write a starter file with serverfs init\n`);
  });

  test("--config ~name/x is not expanded: it is a relative file name", () => {
    const h = home();
    const cwd = tempDir();
    fs.mkdirSync(path.join(cwd, "~nobody"));
    fs.writeFileSync(path.join(cwd, "~nobody", "x.toml"), wd("lit", "/srv/lit"));
    const r = runCli(["render-config", "--config", "~nobody/x.toml"], { cwd, env: h.env });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout).workdirs[0].alias).toBe("lit");
  });

  test("init --out ~/serverfs.toml and doctor --config ~/serverfs.toml", () => {
    const h = home();
    const r = runCli(["init", "--out", "~/serverfs.toml"], { cwd: tempDir(), env: h.env });
    expect(r.code).toBe(0);
    expect(fs.existsSync(path.join(h.dir, "serverfs.toml"))).toBe(true);
    const d = runCli(["doctor", "--config", "~/serverfs.toml", "--json"], { cwd: tempDir(), env: h.env });
    expect(d.stderr).not.toContain("CONFIGURATION_ERROR");
    expect(JSON.parse(d.stdout).checks.length).toBeGreaterThan(0);
  });

  test("serve --workdir docs=~/docs serves HOME/docs to a real MCP client", async () => {
    const h = home();
    fs.mkdirSync(path.join(h.dir, "docs"));
    fs.writeFileSync(path.join(h.dir, "docs", "hello.txt"), "hello from home\n");
    const serve = await connectServe({ args: ["--workdir", "docs=~/docs"], cwd: tempDir(), env: h.env });
    try {
      const r = await serve.call("read_text_file", { workdir: "docs", path: "hello.txt" });
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.content)).toContain("hello from home");
    } finally {
      await serve.close();
    }
  });

  test("serve --config ~/serverfs.toml loads the file under HOME", async () => {
    const h = home();
    fs.mkdirSync(path.join(h.dir, "data"));
    fs.writeFileSync(path.join(h.dir, "data", "a.txt"), "from config\n");
    fs.writeFileSync(path.join(h.dir, "serverfs.toml"), wd("data", path.join(h.dir, "data")));
    const serve = await connectServe({ args: ["--config", "~/serverfs.toml"], cwd: tempDir(), env: h.env });
    try {
      const r = await serve.call("read_text_file", { workdir: "data", path: "a.txt" });
      expect(JSON.stringify(r.content)).toContain("from config");
    } finally {
      await serve.close();
    }
  });
});
