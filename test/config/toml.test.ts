// serverfs.toml: every key of docs/configuration.md, its bounds and defaults, and the strictness rules.
import { afterAll, describe, expect, test } from "bun:test";
import * as fs from "node:fs";
import * as path from "node:path";
import { DEFAULT_LIMITS, DEFAULT_POLICY } from "../../src/config/defaults.ts";
import { cleanupTempDirs, expectProblem, load, problems, tempDir, toml, wd } from "./helpers.ts";

afterAll(cleanupTempDirs);

describe("serverfs.toml: valid documents", () => {
  test("a minimal config gets every default", async () => {
    const { registry, source } = await load(toml(wd("docs")));
    expect(source.format).toBe("toml");
    expect(registry.server).toEqual({ log_level: "INFO", state_dir: null });
    expect(registry.limits).toEqual({ ...DEFAULT_LIMITS });
    expect(registry.workdirs).toEqual([
      {
        alias: "docs",
        path: "/srv/data",
        description: null,
        read_only: true,
        agent_mode: "disabled",
        agent_runtimes: [],
        ...DEFAULT_POLICY,
        extra_deny_globs: [],
      },
    ]);
    expect(registry.agent.enabled).toBe(false);
    expect(registry.agent.acp_profiles).toEqual([]);
    expect(registry.agent.proxy).toEqual({ enabled: false, url: null, no_proxy: ["127.0.0.1", "localhost", "::1"] });
  });

  test("Windows roots are accepted verbatim", async () => {
    const roots = ["D:\\agent-data\\docs", "C:\\Users\\me\\proj", "\\\\?\\D:\\deep\\x", "E:/forward/slashes", "\\\\server\\share\\dir"];
    const text = roots.map((r, i) => `[[workdirs]]\nalias = "w${i}"\npath = '${r}'\n`).join("");
    const { registry } = await load(toml(text));
    expect(registry.workdirs.map((w) => w.path)).toEqual(roots);
  });

  test("log level is case-insensitive and normalized", async () => {
    const { registry } = await load(toml(`[server]\nlog_level = "debug"\n${wd("a")}`));
    expect(registry.server.log_level).toBe("DEBUG");
  });

  test("per-workdir overrides win; deny globs are a union with the global list", async () => {
    const text = `[defaults]
allow_hidden = true
extra_deny_globs = ["*.bak", "internal/**"]
max_read_bytes = 1000
${wd("a", "/a", 'extra_deny_globs = ["secret/**", "*.bak"]\nallow_hidden = false\nmax_read_bytes = 10\nmax_read_lines = 3\nmax_write_bytes = 7\nbinary_transfer_enabled = true\nmax_binary_transfer_bytes = 99\ndisable_default_deny = true\n')}
${wd("b", "/b")}`;
    const { registry } = await load(toml(text));
    const [a, b] = registry.workdirs;
    expect(a!.extra_deny_globs).toEqual(["*.bak", "internal/**", "secret/**"]);
    expect(a!.allow_hidden).toBe(false);
    expect(a!.max_read_bytes).toBe(10);
    expect(a!.max_read_lines).toBe(3);
    expect(a!.max_write_bytes).toBe(7);
    expect(a!.binary_transfer_enabled).toBe(true);
    expect(a!.max_binary_transfer_bytes).toBe(99);
    expect(a!.disable_default_deny).toBe(true);
    expect(b!.extra_deny_globs).toEqual(["*.bak", "internal/**"]);
    expect(b!.allow_hidden).toBe(true);
    expect(b!.max_read_bytes).toBe(1000);
  });

  test("64 workdirs are accepted", async () => {
    const text = Array.from({ length: 64 }, (_, i) => wd(`w${i}`)).join("");
    expect((await load(toml(text))).registry.workdirs).toHaveLength(64);
  });

  test("a description is trimmed and an empty one means none", async () => {
    const { registry } = await load(toml(wd("a", "/a", 'description = "  hi  "\n') + wd("b", "/b", 'description = "  "\n')));
    expect(registry.workdirs.map((w) => w.description)).toEqual(["hi", null]);
  });
});

describe("serverfs.toml: invalid aliases", () => {
  const bad = ["", "1abc", "-abc", "a b", "a/b", "ümlaut", "a".repeat(33), "_x", "a.b"];
  for (const alias of bad) {
    test(`alias ${JSON.stringify(alias)} is refused`, async () => {
      await expectProblem(toml(wd(alias)), "workdirs[0].alias", "expected an alias");
    });
  }
  test("a 32-character alias is accepted", async () => {
    expect((await load(toml(wd("a".repeat(32))))).registry.workdirs[0]!.alias).toBe("a".repeat(32));
  });
  test("duplicate alias is refused, naming the second entry", async () => {
    await expectProblem(toml(wd("docs") + wd("docs", "/other")), "workdirs[1].alias", "duplicate alias");
  });
  test("aliases are case-sensitive: Docs and docs are distinct", async () => {
    expect((await load(toml(wd("Docs") + wd("docs")))).registry.workdirs).toHaveLength(2);
  });
});

describe("serverfs.toml: invalid paths", () => {
  const bad: Array<[string, string]> = [
    ["relative", "absolute"],
    ["./x", "absolute"],
    ["x/y", "absolute"],
    [".\\x", "absolute"],
    ["D:file", "absolute"],
    ["\\rooted", "absolute"],
    ["/srv/../etc", "'..'"],
    ["/srv/a/..", "'..'"],
    ["C:\\data\\..\\x", "'..'"],
    ["\\\\?\\D:\\a\\..\\b", "'..'"],
    ["C:/data/../x", "'..'"],
    ["", "empty"],
  ];
  for (const [p, reason] of bad) {
    test(`path ${JSON.stringify(p)} is refused`, async () => {
      await expectProblem(toml(wd("a", p)), "workdirs[0].path", reason);
    });
  }
  test("state_dir must be absolute too", async () => {
    await expectProblem(toml(`[server]\nstate_dir = "state"\n${wd("a")}`), "server.state_dir", "absolute");
  });
});

describe("serverfs.toml: strict types and keys", () => {
  const cases: Array<[string, string, string, string]> = [
    ["read_only string", wd("a", "/a", 'read_only = "false"\n'), "workdirs[0].read_only", "expected a boolean"],
    ["read_only integer", wd("a", "/a", "read_only = 0\n"), "workdirs[0].read_only", "expected a boolean"],
    ["negative limit", `[defaults]\nmax_read_bytes = -1\n${wd("a")}`, "defaults.max_read_bytes", "positive integer, got -1"],
    ["zero limit", `[limits]\nmax_list_entries = 0\n${wd("a")}`, "limits.max_list_entries", "positive integer, got 0"],
    ["float limit", `[limits]\nmax_walk_entries = 1.5\n${wd("a")}`, "limits.max_walk_entries", "positive integer"],
    ["bool as int", `[limits]\nmax_walk_entries = true\n${wd("a")}`, "limits.max_walk_entries", "positive integer, got true"],
    ["string as int", wd("a", "/a", 'max_read_lines = "5"\n'), "workdirs[0].max_read_lines", "got a string"],
    ["unknown workdir key", wd("a", "/a", "readonly = true\n"), "workdirs[0].readonly", "unknown key"],
    ["unknown defaults key", `[defaults]\nmax_list_entries = 5\n${wd("a")}`, "defaults.max_list_entries", "unknown key"],
    ["unknown section", `[sever]\nlog_level = "INFO"\n${wd("a")}`, "sever", "unknown key"],
    ["unknown agent key", `[agent]\nenable = true\n${wd("a")}`, "agent.enable", "unknown key"],
    ["invalid log level", `[server]\nlog_level = "VERBOSE"\n${wd("a")}`, "server.log_level", "DEBUG, INFO, WARNING or ERROR"],
    ["workdirs as table", `[workdirs]\nalias = "a"\npath = "/a"\n`, "workdirs", "expected a list"],
    ["globs as string", wd("a", "/a", 'extra_deny_globs = "*.pem"\n'), "workdirs[0].extra_deny_globs", "expected a list"],
    ["empty glob", wd("a", "/a", 'extra_deny_globs = [""]\n'), "workdirs[0].extra_deny_globs[0]", "must not be empty"],
    ["date value", wd("a", "/a", "description = 2024-01-01\n"), "workdirs[0].description", "got a date"],
    ["list default above max", `[limits]\ndefault_list_limit = 600\n${wd("a")}`, "limits.default_list_limit", "max_list_entries"],
    ["search default above max", `[limits]\ndefault_search_results = 101\n${wd("a")}`, "limits.default_search_results", "max_search_results"],
  ];
  for (const [name, text, key, reason] of cases) {
    test(`${name} → ${key}`, async () => {
      await expectProblem(toml(text), key, reason);
    });
  }

  test("no workdirs at all is refused", async () => {
    await expectProblem(toml(`[server]\nlog_level = "INFO"\n`), "workdirs", "missing");
    await expectProblem(toml(`workdirs = []\n`), "workdirs", "1 to 64");
  });

  test("65 workdirs are refused", async () => {
    const text = Array.from({ length: 65 }, (_, i) => wd(`w${i}`)).join("");
    await expectProblem(toml(text), "workdirs", "1 to 64");
  });

  test("missing file, directory, invalid TOML and invalid UTF-8 are file-level problems", async () => {
    const dir = tempDir();
    const missing = path.join(dir, "nope.toml");
    await expectProblem({ configFile: missing, file: missing }, "", "not found; fix: check the path, or write a starter file with serverfs init");
    await expectProblem({ configFile: dir, file: dir }, "", "directory");
    const bad = toml(`[[workdirs]]\nalias = "a\npath = "/a"\n`);
    const hit = await expectProblem(bad, "", "invalid TOML at line 2");
    expect(hit).not.toContain('alias = "a'); // the offending line is not quoted back
    const dup = toml(`${wd("a")}alias = "b"\n`);
    await expectProblem(dup, "", "invalid TOML");
    const file = path.join(dir, "latin1.toml");
    fs.writeFileSync(file, Buffer.from([0x5b, 0x73, 0x65, 0x72, 0x76, 0x65, 0x72, 0x5d, 0x0a, 0x23, 0xff, 0x0a]));
    await expectProblem({ configFile: file, file }, "", "UTF-8");
  });

  test("all problems are reported, in a deterministic order", async () => {
    const text = `[server]\nlog_level = "LOUD"\n${wd("1x", "rel", 'read_only = "yes"\n')}${wd("ok", "/ok", "bogus = 1\n")}`;
    const first = await problems(toml(text));
    const second = await problems(toml(text));
    expect(first.map((p) => p.replace(/^[^:]+: /, ""))).toEqual(second.map((p) => p.replace(/^[^:]+: /, "")));
    const keys = first.map((p) => p.split(": ")[1]);
    expect(keys).toContain("workdirs[0].alias");
    expect(keys).toContain("workdirs[0].read_only");
    expect(keys).toContain("workdirs[1].bogus");
  });

  test("a shape error stops before cross-field rules (no cascade of follow-on problems)", async () => {
    const list = await problems(toml(wd("a", "/a", 'read_only = "false"\nagent_mode = "workspace-write"\n')));
    expect(list).toHaveLength(1);
  });
});
