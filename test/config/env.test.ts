// The Linux .env format: syntax parsed as data, strict values, slot mapping, and error keys in
// the .env vocabulary.
import { afterAll, describe, expect, test } from "bun:test";
import { cleanupTempDirs, env, expectProblem, load, problems } from "./helpers.ts";

afterAll(cleanupTempDirs);

const SLOT1 = "WORKDIR_01_ALIAS=docs\nWORKDIR_01_PATH=/srv/docs\n";

describe(".env syntax", () => {
  test("comments, blank lines, CRLF, quotes and inline comments", async () => {
    const text = [
      "# a comment",
      "",
      "   # indented comment",
      "WORKDIR_01_ALIAS=docs   # trailing comment",
      "WORKDIR_01_PATH='/srv/my docs'",
      'WORKDIR_01_DESCRIPTION="Team docs #1"',
      "WORKDIR_02_ALIAS=proj\r",
      "WORKDIR_02_PATH=/srv/proj\r",
      "WORKDIR_02_DESCRIPTION='  spaced  ' # kept literally, then trimmed as a description",
      "UNRELATED_TOOL_SETTING=whatever",
    ].join("\n");
    const { registry, source } = await load(env(text));
    expect(source.format).toBe("env");
    expect(registry.workdirs.map((w) => [w.alias, w.path, w.description])).toEqual([
      ["docs", "/srv/my docs", "Team docs #1"],
      ["proj", "/srv/proj", "spaced"],
    ]);
  });

  test("single quotes are literal: $, backslash and # are plain text", async () => {
    const { registry } = await load(env(`${SLOT1}WORKDIR_01_DESCRIPTION='cost $HOME \\n #x'\n`));
    expect(registry.workdirs[0]!.description).toBe("cost $HOME \\n #x");
  });

  const cases: Array<[string, string, string, string]> = [
    ["export prefix", "export SERVERFS_LOG_LEVEL=INFO\n", "line 1", "'export' is not supported"],
    ["no equals sign", "SERVERFS_LOG_LEVEL\n", "line 1", "expected KEY=VALUE"],
    ["bad key", "1KEY=x\n", "line 1", "the key must be"],
    ["unterminated single quote", "WORKDIR_01_DESCRIPTION='abc\n", "line 1: WORKDIR_01_DESCRIPTION", "unterminated single quote"],
    ["double quote with $", 'WORKDIR_01_DESCRIPTION="$HOME"\n', "line 1: WORKDIR_01_DESCRIPTION", "use single quotes"],
    ["double quote with backslash", 'WORKDIR_01_DESCRIPTION="a\\nb"\n', "line 1: WORKDIR_01_DESCRIPTION", "use single quotes"],
    ["unquoted with space", "WORKDIR_01_DESCRIPTION=two words\n", "line 1: WORKDIR_01_DESCRIPTION", "may not contain whitespace"],
    ["unquoted with $", "WORKDIR_01_PATH=$HOME/docs\n", "line 1: WORKDIR_01_PATH", "'$'"],
    ["unquoted with backtick", "WORKDIR_01_PATH=`pwd`\n", "line 1: WORKDIR_01_PATH", "may not contain"],
    ["text after quote", "WORKDIR_01_PATH='/a'b\n", "line 1: WORKDIR_01_PATH", "after the closing quote"],
    ["value starting with #", "WORKDIR_01_DESCRIPTION=#x\n", "line 1: WORKDIR_01_DESCRIPTION", "ambiguous"],
  ];
  for (const [name, text, key, reason] of cases) {
    test(`${name} → ${key}`, async () => {
      await expectProblem(env(text + SLOT1.replace(/^/gm, "")), key, reason);
    });
  }

  test("a duplicate key is refused even when the values agree", async () => {
    await expectProblem(env(`${SLOT1}SERVERFS_LOG_LEVEL=INFO\nSERVERFS_LOG_LEVEL=INFO\n`), "line 4: SERVERFS_LOG_LEVEL", "first set on line 3");
  });
});

describe(".env values", () => {
  const truthy = ["true", "TRUE", "True", "1", "yes", "YES", "on", "On"];
  const falsy = ["false", "FALSE", "0", "no", "No", "off", "OFF"];
  for (const word of truthy) {
    test(`READ_ONLY=${word} → true`, async () => {
      const { registry } = await load(env(`${SLOT1}WORKDIR_01_READ_ONLY=${word}\n`));
      expect(registry.workdirs[0]!.read_only).toBe(true);
    });
  }
  for (const word of falsy) {
    test(`READ_ONLY=${word} → false`, async () => {
      const { registry } = await load(env(`${SLOT1}WORKDIR_01_READ_ONLY=${word}\n`));
      expect(registry.workdirs[0]!.read_only).toBe(false);
    });
  }
  test("READ_ONLY empty or absent → true (read-only by default)", async () => {
    expect((await load(env(`${SLOT1}WORKDIR_01_READ_ONLY=\n`))).registry.workdirs[0]!.read_only).toBe(true);
    expect((await load(env(SLOT1))).registry.workdirs[0]!.read_only).toBe(true);
  });
  for (const word of ["maybe", "2", "tru", "y", "'false '", "-1"]) {
    test(`READ_ONLY=${word} is refused`, async () => {
      await expectProblem(env(`${SLOT1}WORKDIR_01_READ_ONLY=${word}\n`), "WORKDIR_01_READ_ONLY", "expected true or false");
    });
  }

  const overrideErrors: Array<[string, string, string]> = [
    ["WORKDIR_01_MAX_READ_BYTES", "abc", "expected a positive integer"],
    ["WORKDIR_01_MAX_READ_BYTES", "1.5", "expected a positive integer"],
    ["WORKDIR_01_MAX_READ_LINES", "-5", "expected a positive integer, got -5"],
    ["WORKDIR_01_MAX_WRITE_BYTES", "0", "expected a positive integer, got 0"],
    ["WORKDIR_01_MAX_BINARY_TRANSFER_BYTES", "99999999999999999", "expected a positive integer"],
    ["WORKDIR_01_ALLOW_HIDDEN", "sometimes", "expected true or false"],
    ["WORKDIR_01_DISABLE_DEFAULT_DENY", "2", "expected true or false"],
    ["WORKDIR_01_BINARY_TRANSFER_ENABLED", "enabled", "expected true or false"],
    ["WORKDIR_01_AGENT_MODE", "write", '"disabled", "review" or "workspace-write"'],
    // The reference silently fell back to defaults for bad global ints/bools; serverfs refuses.
    ["SERVERFS_MAX_LIST_ENTRIES", "lots", "expected a positive integer"],
    ["SERVERFS_MAX_WALK_ENTRIES", "-1", "expected a positive integer, got -1"],
    ["SERVERFS_ALLOW_HIDDEN", "maybe", "expected true or false"],
    ["SERVERFS_LOG_LEVEL", "LOUD", "DEBUG, INFO, WARNING or ERROR"],
  ];
  for (const [key, value, reason] of overrideErrors) {
    test(`${key}=${value} is refused`, async () => {
      await expectProblem(env(`${SLOT1}${key}=${value}\n`), key, reason);
    });
  }

  test("per-workdir overrides and the global/workdir deny-glob union", async () => {
    const text = `SERVERFS_EXTRA_DENY_GLOBS=' *.bak , internal/** ,,'
SERVERFS_MAX_READ_BYTES=1000
SERVERFS_ALLOW_HIDDEN=on
${SLOT1}WORKDIR_01_EXTRA_DENY_GLOBS=secret/**,*.bak
WORKDIR_01_MAX_READ_BYTES=10
WORKDIR_01_ALLOW_HIDDEN=off
WORKDIR_01_MAX_READ_LINES=3
WORKDIR_01_MAX_WRITE_BYTES=7
WORKDIR_01_BINARY_TRANSFER_ENABLED=yes
WORKDIR_01_MAX_BINARY_TRANSFER_BYTES=99
WORKDIR_01_DISABLE_DEFAULT_DENY=1
WORKDIR_02_ALIAS=b
WORKDIR_02_PATH=/b
WORKDIR_02_MAX_READ_BYTES=
`;
    const { registry } = await load(env(text));
    const [a, b] = registry.workdirs;
    expect(a).toMatchObject({
      extra_deny_globs: ["*.bak", "internal/**", "secret/**"],
      allow_hidden: false,
      max_read_bytes: 10,
      max_read_lines: 3,
      max_write_bytes: 7,
      binary_transfer_enabled: true,
      max_binary_transfer_bytes: 99,
      disable_default_deny: true,
    });
    expect(b).toMatchObject({ extra_deny_globs: ["*.bak", "internal/**"], allow_hidden: true, max_read_bytes: 1000 });
  });

  test("retention in hours is converted; giving both spellings is refused", async () => {
    const base = `${SLOT1}SERVERFS_AGENT_TASK_RETENTION_HOURS=2\n`;
    expect((await load(env(base))).registry.agent.retention_seconds).toBe(7200);
    await expectProblem(env(`${base}SERVERFS_AGENT_RETENTION_SECONDS=60\n`), "SERVERFS_AGENT_TASK_RETENTION_HOURS", "not both");
  });

  test("proxy host and port form the URL; one without the other is refused", async () => {
    const ok = await load(env(`${SLOT1}SERVERFS_PROXY_HOST=::1\nSERVERFS_PROXY_PORT=8080\n`));
    expect(ok.registry.agent.proxy.url).toBe("http://[::1]:8080");
    await expectProblem(env(`${SLOT1}SERVERFS_PROXY_HOST=proxy\n`), "SERVERFS_PROXY_PORT", "together");
    await expectProblem(env(`${SLOT1}SERVERFS_PROXY_HOST=proxy\nSERVERFS_PROXY_PORT=99999\n`), "SERVERFS_PROXY_HOST/SERVERFS_PROXY_PORT", "1 to 65535");
    await expectProblem(env(`${SLOT1}SERVERFS_AGENT_PROXY_ENABLED=true\n`), "SERVERFS_PROXY_HOST/SERVERFS_PROXY_PORT", "required when the proxy is enabled");
  });
});

describe(".env slots and keys", () => {
  const unknown = ["SERVERFS_BOGUS", "WORKDIR_17_ALIAS", "WORKDIR_00_ALIAS", "WORKDIR_1_ALIAS", "WORKDIR_01_READONLY", "SERVERFS_AGENT_PEER_UID"];
  for (const key of unknown) {
    test(`${key} is an unknown key`, async () => {
      await expectProblem(env(`${SLOT1}${key}=1\n`), key, "unknown key");
    });
  }
  test("an unknown key is refused even when empty", async () => {
    await expectProblem(env(`${SLOT1}SERVERFS_READONLY=\n`), "SERVERFS_READONLY", "unknown key");
  });

  test("slots may be sparse; errors name the slot the operator wrote", async () => {
    const text = "WORKDIR_03_ALIAS=a\nWORKDIR_03_PATH=/a\nWORKDIR_07_ALIAS=b\nWORKDIR_07_PATH=relative\n";
    await expectProblem(env(text), "WORKDIR_07_PATH", "absolute");
    const good = await load(env("WORKDIR_07_ALIAS=b\nWORKDIR_07_PATH=/b\nWORKDIR_03_ALIAS=a\nWORKDIR_03_PATH=/a\n"));
    expect(good.registry.workdirs.map((w) => w.alias)).toEqual(["a", "b"]);
  });

  test("a slot with a path but no alias, or an alias but no path, is refused", async () => {
    await expectProblem(env(`${SLOT1}WORKDIR_03_PATH=/x\n`), "WORKDIR_03_ALIAS", "missing");
    await expectProblem(env("WORKDIR_02_ALIAS=x\n"), "WORKDIR_02_PATH", "missing");
  });

  test("no slot at all is refused", async () => {
    await expectProblem(env("SERVERFS_LOG_LEVEL=INFO\n"), "WORKDIR_NN_ALIAS (no workdir slot is set)", "missing");
    await expectProblem(env("WORKDIR_01_ALIAS=\nWORKDIR_01_PATH=\n"), "WORKDIR_NN_ALIAS (no workdir slot is set)", "missing");
  });

  test("invalid and duplicate aliases name the slot", async () => {
    await expectProblem(env(`${SLOT1}WORKDIR_02_ALIAS=2bad\nWORKDIR_02_PATH=/b\n`), "WORKDIR_02_ALIAS", "expected an alias");
    await expectProblem(env(`${SLOT1}WORKDIR_02_ALIAS=docs\nWORKDIR_02_PATH=/b\n`), "WORKDIR_02_ALIAS", "duplicate alias");
  });

  test("16 slots is the maximum and all are usable", async () => {
    const text = Array.from({ length: 16 }, (_, i) => {
      const n = String(i + 1).padStart(2, "0");
      return `WORKDIR_${n}_ALIAS=w${n}\nWORKDIR_${n}_PATH=/w/${n}\n`;
    }).join("");
    expect((await load(env(text))).registry.workdirs).toHaveLength(16);
  });

  test("several problems are all reported with their .env keys", async () => {
    const list = await problems(env("SERVERFS_NOPE=1\nWORKDIR_01_ALIAS=a\nWORKDIR_01_PATH=/a\nWORKDIR_01_READ_ONLY=perhaps\n"));
    expect(list.map((p) => p.split(": ")[1])).toEqual(["SERVERFS_NOPE", "WORKDIR_01_READ_ONLY"]);
  });
});

describe("[agent] approvals", () => {
  test("defaults to auto; the same value from TOML and .env renders the same document", async () => {
    const { toml, wd } = await import("./helpers.ts");
    const { renderDocument } = await import("../../src/config/render.ts");
    expect((await load(env(SLOT1))).registry.agent.approvals).toBe("auto");
    for (const value of ["auto", "elicitation", "tools", "terminal"]) {
      const fromEnv = (await load(env(`${SLOT1}SERVERFS_AGENT_APPROVALS=${value}\n`))).registry;
      const fromToml = (await load(toml(`${wd("docs", "/srv/docs")}[agent]\napprovals = "${value}"\n`))).registry;
      expect(fromEnv.agent.approvals).toBe(value as never);
      expect(renderDocument(fromToml)).toBe(renderDocument(fromEnv));
      expect(JSON.parse(renderDocument(fromEnv)).agent.approvals).toBe(value);
    }
  });

  test("any other value is refused, naming the key in the operator's vocabulary", async () => {
    const { toml, wd } = await import("./helpers.ts");
    await expectProblem(env(`${SLOT1}SERVERFS_AGENT_APPROVALS=model\n`), "SERVERFS_AGENT_APPROVALS", '"auto", "elicitation", "terminal" or "tools"');
    await expectProblem(toml(`${wd("docs")}[agent]\napprovals = "Auto"\n`), "agent.approvals", '"auto", "elicitation", "terminal" or "tools"');
    await expectProblem(toml(`${wd("docs")}[agent]\napprovals = true\n`), "agent.approvals");
  });
});
