// The JSON / JSON-with-comments editor behind `connect --write`: the entry goes in by text edits,
// so every byte of the rest of the file (comments, key order, spacing, line endings, a BOM)
// survives, and a file the host could not read is refused, not edited.
import { describe, expect, test } from "bun:test";
import { editJsonConfig, type JsonEntryEdit, verifyJsonEdit } from "../../src/commands/connect-json-edit.ts";
import { ServerfsError } from "../../src/errors.ts";

const entry = { command: "/usr/bin/serverfs", args: ["serve", "--config", "/etc/serverfs.toml"] };
const STRICT = { comments: false, trailingCommas: false };
const JSONC = { comments: true, trailingCommas: true };
const COMMENTS_ONLY = { comments: true, trailingCommas: false };

function edit(text: string | null, over: Partial<JsonEntryEdit> = {}) {
  return editJsonConfig(text, { key: "mcpServers", name: "serverfs", entry, syntax: STRICT, force: false, label: "cfg.json", ...over });
}

function refusal(text: string, over: Partial<JsonEntryEdit> = {}): ServerfsError {
  try {
    edit(text, over);
  } catch (err) {
    expect(err).toBeInstanceOf(ServerfsError);
    return err as ServerfsError;
  }
  throw new Error("expected a refusal");
}

/** `original` is `result` with characters taken out: nothing of it was changed or reordered. */
function isSubsequence(original: string, result: string): boolean {
  let i = 0;
  for (const ch of result) if (i < original.length && ch === original[i]) i++;
  return i === original.length;
}

const ENTRY_2 = (indent: string) =>
  [
    `"serverfs": {`,
    `  "command": "/usr/bin/serverfs",`,
    `  "args": [`,
    `    "serve",`,
    `    "--config",`,
    `    "/etc/serverfs.toml"`,
    `  ]`,
    `}`,
  ]
    .map((line, i) => (i === 0 ? line : indent + line))
    .join("\n");

describe("adding the entry", () => {
  test("a missing, empty or whitespace-only file becomes a fresh document", () => {
    const fresh = `{\n  "mcpServers": {\n    ${ENTRY_2("    ")}\n  }\n}\n`;
    for (const text of [null, "", "  \n\n"]) expect(edit(text).text).toBe(fresh);
  });

  test("beside other servers and keys: only a comma and the entry are added", () => {
    const original = [
      "{",
      '  "globalShortcut": "Ctrl+Space",',
      '  "mcpServers": {',
      '    "filesystem": {',
      '      "command": "npx",',
      '      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/ann/Desktop"]',
      "    },",
      '    "git": { "command": "uvx", "args": ["mcp-server-git"] }',
      "  },",
      '  "preferences": { "sidebarMode": "chat" }',
      "}",
      "",
    ].join("\n");
    const r = edit(original);
    expect(r.replaced).toBe(false);
    expect(r.text).toBe(
      original.replace(
        '    "git": { "command": "uvx", "args": ["mcp-server-git"] }\n',
        `    "git": { "command": "uvx", "args": ["mcp-server-git"] },\n    ${ENTRY_2("    ")}\n`,
      ),
    );
    expect(isSubsequence(original, r.text)).toBe(true);
  });

  test("no servers key yet: added as the last top-level key", () => {
    const original = '{\n  "theme": "dark"\n}\n';
    expect(edit(original).text).toBe(`{\n  "theme": "dark",\n  "mcpServers": {\n    ${ENTRY_2("    ")}\n  }\n}\n`);
  });

  test("an empty servers object on one line is opened up", () => {
    expect(edit('{\n  "mcpServers": {}\n}\n').text).toBe(`{\n  "mcpServers": {\n    ${ENTRY_2("    ")}\n  }\n}\n`);
  });

  test("the file's indentation (tabs, four spaces) is used for the entry", () => {
    const tabs = edit('{\n\t"a": 1\n}\n').text;
    expect(tabs).toBe(`{\n\t"a": 1,\n\t"mcpServers": {\n\t\t"serverfs": {\n\t\t\t"command": "/usr/bin/serverfs",\n\t\t\t"args": [\n\t\t\t\t"serve",\n\t\t\t\t"--config",\n\t\t\t\t"/etc/serverfs.toml"\n\t\t\t]\n\t\t}\n\t}\n}\n`);
    const four = edit('{\n    "mcpServers": {\n        "a": {}\n    }\n}').text;
    expect(four).toBe(`{\n    "mcpServers": {\n        "a": {},\n        "serverfs": {\n            "command": "/usr/bin/serverfs",\n            "args": [\n                "serve",\n                "--config",\n                "/etc/serverfs.toml"\n            ]\n        }\n    }\n}`);
  });

  test("a one-line (minified) file stays on one line", () => {
    const original = '{"mcpServers":{"a":{"command":"x"}},"z":1}';
    expect(edit(original).text).toBe(`{"mcpServers":{"a":{"command":"x"},"serverfs":${JSON.stringify(entry)}},"z":1}`);
  });

  test("CRLF line endings and a byte order mark are kept", () => {
    const original = '\uFEFF{\r\n  "mcpServers": {\r\n    "a": {}\r\n  }\r\n}\r\n';
    const r = edit(original).text;
    expect(r.startsWith('\uFEFF{\r\n  "mcpServers": {\r\n    "a": {},\r\n    "serverfs": {\r\n')).toBe(true);
    expect(r.replace(/\r\n/g, "")).not.toContain("\n");
    expect(JSON.parse(r.slice(1)).mcpServers.serverfs).toEqual(entry);
  });

  test("strings that look like structure or comments do not confuse the edit", () => {
    const original = '{\n  "mcpServers": {\n    "odd": { "command": "}{,//", "args": ["/* x */", "\\"}"] }\n  }\n}\n';
    const r = edit(original);
    expect(JSON.parse(r.text).mcpServers.odd).toEqual({ command: "}{,//", args: ["/* x */", '"}'] });
    expect(isSubsequence(original, r.text)).toBe(true);
  });
});

describe("JSON with comments (VS Code, Gemini CLI)", () => {
  const vscode = { key: "servers", syntax: JSONC };
  const original = [
    "// VS Code MCP servers",
    "{",
    '  "inputs": [],',
    '  "servers": {',
    "    /* the docs server */",
    '    "docs": {',
    '      "type": "stdio",',
    '      "command": "node",',
    '      "args": ["docs.js"], // trailing',
    "    }, // after docs",
    "    // \"old\": { \"command\": \"gone\" }",
    "  },",
    "}",
    "",
  ].join("\n");

  test("every comment and trailing comma stays where it was; the entry goes last", () => {
    const r = edit(original, vscode);
    expect(r.text).toBe(original.replace('  },\n}', `    ${ENTRY_2("    ")}\n  },\n}`));
    expect(isSubsequence(original, r.text)).toBe(true);
  });

  test("a comment after the last server: the comma goes before it, the entry after", () => {
    const text = '{\n  "mcpServers": {\n    "a": {"command": "x"} // the a\n  }\n}\n';
    expect(edit(text, { syntax: COMMENTS_ONLY }).text).toBe(`{\n  "mcpServers": {\n    "a": {"command": "x"}, // the a\n    ${ENTRY_2("    ")}\n  }\n}\n`);
  });

  test("--force replaces only the old entry's value; comments inside it go with it, the rest stay", () => {
    const text = [
      "{",
      '  "servers": {',
      '    // ours',
      '    "serverfs": { /* old */ "type": "stdio", "command": "old", "args": [] }, // keep me',
      '    "docs": { "command": "node" }',
      "  }",
      "}",
    ].join("\n");
    const r = edit(text, { ...vscode, force: true });
    expect(r.replaced).toBe(true);
    const value = JSON.stringify(entry, null, 2).split("\n").join("\n    ");
    expect(r.text).toBe(text.replace('{ /* old */ "type": "stdio", "command": "old", "args": [] }', value));
  });
});

describe("refusals: nothing is edited", () => {
  test.each([
    ["a comment in a strict JSON file", '{ // hi\n "a": 1 }', "line 1, column 3: a comment"],
    ["a trailing comma in a strict JSON file", '{ "a": 1, }', "line 1, column 11: a property name was expected (a trailing comma?)"],
    ["an unclosed object", '{\n  "mcpServers": {\n', "line 3, column 1"],
    ["a bare word", "{ a: 1 }", "not valid JSON"],
    ["an unclosed string", '{ "a": "x }', "a string is not closed"],
  ])("%s: HOST_CONFIG_INVALID with line and column", (_name, text, why) => {
    const err = refusal(text);
    expect(err.code).toBe("HOST_CONFIG_INVALID");
    expect(err.message).toContain("cfg.json: not valid JSON");
    expect(err.message).toContain(why);
    expect(err.message).toEndWith("; nothing was written");
  });

  test("a trailing comma is still refused for Gemini CLI, which accepts only comments", () => {
    expect(refusal('{ "a": 1, // c\n}', { syntax: COMMENTS_ONLY }).message).toContain("not valid JSON with comments");
    expect(edit('{ "a": 1 // c\n}', { syntax: COMMENTS_ONLY }).text).toContain('"a": 1, // c');
  });

  test.each([
    ["the top level is an array", "[1, 2]", "the top level is not a JSON object"],
    ["the top level is a string", '"x"', "the top level is not a JSON object"],
    ["mcpServers is not an object", '{ "mcpServers": [] }', '"mcpServers" is not an object'],
    ["mcpServers twice", '{ "mcpServers": {}, "mcpServers": {} }', '"mcpServers" appears more than once'],
    ["serverfs twice", '{ "mcpServers": { "serverfs": {}, "serverfs": {} } }', '"serverfs" appears more than once'],
  ])("%s: HOST_CONFIG_INVALID", (_name, text, why) => {
    const err = refusal(text, { force: true });
    expect(err.code).toBe("HOST_CONFIG_INVALID");
    expect(err.message).toBe(`cfg.json: ${why}${why.includes("more than once") ? " in the same object, so which one the host uses is unclear" : ""}; nothing was written`);
  });

  test("an existing serverfs entry without --force: HOST_ENTRY_EXISTS", () => {
    const err = refusal('{ "mcpServers": { "serverfs": { "command": "mine" } } }');
    expect(err.code).toBe("HOST_ENTRY_EXISTS");
    expect(err.message).toBe('cfg.json: already has a "serverfs" server under "mcpServers"; pass --force to replace it');
  });

  test("a file of comments only holds no document", () => {
    expect(refusal("// nothing here\n", { syntax: JSONC }).code).toBe("HOST_CONFIG_INVALID");
  });
});

describe("the check after every edit", () => {
  const req: JsonEntryEdit = { key: "mcpServers", name: "serverfs", entry, syntax: JSONC, force: false, label: "cfg.json" };
  const before = '{\n  // keep\n  "mcpServers": { "a": 1 }\n}\n';
  const good = edit(before, { syntax: JSONC }).text;

  test("passes the editor's own result", () => {
    expect(() => verifyJsonEdit(before, good, req, null)).not.toThrow();
  });

  test.each([
    ["a comment lost", good.replace("// keep\n", "")],
    ["a comment changed", good.replace("// keep", "// kept")],
    ["another server changed", good.replace('"a": 1', '"a": 2')],
    ["another key added", good.replace('"mcpServers"', '"x": 0, "mcpServers"')],
    ["the entry wrong", good.replace("/etc/serverfs.toml", "/etc/other.toml")],
    ["not parseable", good.replace('"a": 1', '"a": ')],
  ])("refuses a result with %s: HOST_CONFIG_UNEDITABLE", (_name, after) => {
    let caught: unknown;
    try {
      verifyJsonEdit(before, after, req, null);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ServerfsError);
    expect((caught as ServerfsError).code).toBe("HOST_CONFIG_UNEDITABLE");
    expect((caught as ServerfsError).message).toStartWith("cfg.json: serverfs could not add the entry without changing the rest of the file");
  });
});
