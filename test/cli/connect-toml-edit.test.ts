// The TOML editor behind `connect codex --write`: a [mcp_servers.serverfs] table appended, or
// with --force its old tables replaced, by text edits; every other byte of config.toml stays,
// and the result must parse to the old document plus the entry.
import { describe, expect, test } from "bun:test";
import { parse } from "smol-toml";
import { editTomlConfig, expectSameExceptEntry, tomlSections, type TomlEntryEdit } from "../../src/commands/connect-toml-edit.ts";
import { ServerfsError } from "../../src/errors.ts";

const entry = { command: "/usr/bin/serverfs", args: ["serve", "--workdir", "docs=~/docs"] };
const TABLE = '[mcp_servers.serverfs]\ncommand = "/usr/bin/serverfs"\nargs = ["serve", "--workdir", "docs=~/docs"]\n';

function edit(text: string | null, over: Partial<TomlEntryEdit> = {}) {
  return editTomlConfig(text, { table: "mcp_servers", name: "serverfs", entry, force: false, label: "config.toml", ...over });
}

function refusal(text: string, over: Partial<TomlEntryEdit> = {}): ServerfsError {
  try {
    edit(text, over);
  } catch (err) {
    expect(err).toBeInstanceOf(ServerfsError);
    return err as ServerfsError;
  }
  throw new Error("expected a refusal");
}

const CODEX = [
  "# Codex settings",
  'model = "o3"   # the model',
  'approval_policy = "on-request"',
  "",
  "[mcp_servers.docs]",
  'command = "node"',
  'args = ["docs.js", """',
  "[not.a.header]",
  '# not a comment either',
  '"""]',
  "",
  "# the git server",
  "[mcp_servers.git]",
  'command = "git-mcp"',
  "env = { TOKEN = 'x#y' }",
  "",
].join("\n");

describe("appending the table", () => {
  test("a new file is just the table", () => {
    expect(edit(null).text).toBe(TABLE);
    expect(edit("").text).toBe(TABLE);
  });

  test("after everything else, a blank line between; the rest byte for byte", () => {
    const r = edit(CODEX);
    expect(r.replaced).toBe(false);
    expect(r.text).toBe(`${CODEX}\n${TABLE}`);
  });

  test("a file that does not end in a newline gets one before the blank line", () => {
    expect(edit('model = "o3"').text).toBe(`model = "o3"\n\n${TABLE}`);
    expect(edit('model = "o3"\n\n').text).toBe(`model = "o3"\n\n${TABLE}`);
  });

  test("CRLF files get CRLF; a byte order mark is kept", () => {
    const r = edit('\uFEFFmodel = "o3"\r\n').text;
    expect(r).toBe(`\uFEFFmodel = "o3"\r\n\r\n${TABLE.replace(/\n/g, "\r\n")}`);
  });

  test("strings are written as TOML basic strings: quotes, backslashes, control characters", () => {
    const odd = { command: 'C:\\Program Files\\serverfs\\serverfs.exe', args: ["serve", '--workdir', 'a="b"\t\u007f\u00e9'] };
    const r = edit("", { entry: odd });
    expect(parse(r.text)).toEqual({ mcp_servers: { serverfs: odd } });
  });
});

describe("replacing with --force", () => {
  const withOld = [
    'model = "o3"',
    "",
    "[mcp_servers.serverfs]",
    'command = "old"   # old one',
    "args = [",
    '  "serve",',
    "]",
    "",
    "# env for the old one",
    '[mcp_servers."serverfs".env]',
    'A = "1"',
    "",
    "# the docs server",
    "[mcp_servers.docs]",
    'command = "node"',
    "",
  ].join("\n");

  test("without --force: HOST_ENTRY_EXISTS", () => {
    const err = refusal(withOld);
    expect(err.code).toBe("HOST_ENTRY_EXISTS");
    expect(err.message).toBe("config.toml: already has a [mcp_servers.serverfs] server; pass --force to replace it");
  });

  test("the old table and its sub-table go; comments and blank lines before the next table stay", () => {
    const r = edit(withOld, { force: true });
    expect(r.replaced).toBe(true);
    expect(r.text).toBe(
      [
        'model = "o3"',
        "",
        TABLE.trimEnd(),
        "",
        "# env for the old one",
        "",
        "# the docs server",
        "[mcp_servers.docs]",
        'command = "node"',
        "",
      ].join("\n"),
    );
  });

  test("a multi-line string in the old entry whose lines look like headers and comments goes with it", () => {
    const text = '[mcp_servers.serverfs]\ncommand = "old"\nargs = ["""\n[mcp_servers.fake]\n# not a comment\n""", \'\'\'\n[x]\'\'\']\n\n[mcp_servers.docs]\ncommand = "node"\n';
    expect(Object.keys(parse(text).mcp_servers as object)).toEqual(["serverfs", "docs"]);
    expect(edit(text, { force: true }).text).toBe(`${TABLE}\n[mcp_servers.docs]\ncommand = "node"\n`);
  });

  test("an entry written as dotted keys or an inline table is not rewritten: HOST_CONFIG_UNEDITABLE", () => {
    for (const text of ['[mcp_servers]\nserverfs.command = "old"\n', 'mcp_servers = { serverfs = { command = "old" } }\n']) {
      const err = refusal(text, { force: true });
      expect(err.code).toBe("HOST_CONFIG_UNEDITABLE");
      expect(err.message).toContain("replace it by hand");
    }
  });
});

describe("refusals", () => {
  test("invalid TOML: HOST_CONFIG_INVALID with line and column", () => {
    const err = refusal('model = "o3"\nargs = [1,\n');
    expect(err.code).toBe("HOST_CONFIG_INVALID");
    expect(err.message).toBe("config.toml: not valid TOML (line 3, column 1: invalid value); nothing was written");
    expect(refusal("[a]\nx = 1\n[a]\n").message).toContain("line 3");
  });

  test("mcp_servers that is not a table: HOST_CONFIG_INVALID", () => {
    expect(refusal('mcp_servers = "none"\n').message).toBe('config.toml: "mcp_servers" is not a table; nothing was written');
    expect(refusal("[[mcp_servers]]\nx = 1\n").code).toBe("HOST_CONFIG_INVALID");
  });

  test("an inline mcp_servers table cannot take a new table: HOST_CONFIG_UNEDITABLE, not a broken file", () => {
    const err = refusal('mcp_servers = { docs = { command = "node" } }\n');
    expect(err.code).toBe("HOST_CONFIG_UNEDITABLE");
    expect(err.message).toContain("inline table");
  });
});

describe("tomlSections", () => {
  test("finds real headers only, with their quoted keys decoded", () => {
    const text = [
      "a = 1",
      "[x]",
      "s = '''",
      "[inside.literal]",
      "'''",
      "[ 'y z' . \"q\\u0041\" ]  # comment",
      "arr = [",
      "  [1, 2],",
      "]",
      "[[bins]]",
      'name = "[not]"',
    ].join("\n");
    expect(tomlSections(text).map((s) => [s.path, s.array])).toEqual([
      [["x"], false],
      [["y z", "qA"], false],
      [["bins"], true],
    ]);
  });
});

describe("the check after every edit", () => {
  const req: TomlEntryEdit = { table: "mcp_servers", name: "serverfs", entry, force: false, label: "config.toml" };
  const before = parse(CODEX);
  const good = parse(edit(CODEX).text);

  test("passes the editor's own result", () => {
    expect(() => expectSameExceptEntry(before, good, req)).not.toThrow();
  });

  test.each([
    ["another server changed", edit(CODEX).text.replace('command = "git-mcp"', 'command = "git"')],
    ["a top-level key changed", edit(CODEX).text.replace('model = "o3"', 'model = "o4"')],
    ["a top-level key added", `x = 1\n${edit(CODEX).text}`],
    ["the entry wrong", edit(CODEX).text.replace('"docs=~/docs"', '"docs=/x"')],
    ["the entry missing", CODEX],
  ])("refuses a result with %s: HOST_CONFIG_UNEDITABLE", (_name, text) => {
    let caught: unknown;
    try {
      expectSameExceptEntry(before, parse(text), req);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ServerfsError);
    expect((caught as ServerfsError).code).toBe("HOST_CONFIG_UNEDITABLE");
  });
});
