// Where each host keeps its MCP servers, on each OS and for each scope: the table, asked with
// injected facts, so the macOS and Windows answers are checked here too.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { HOST_IDS, HOSTS, type HostLocationFacts, type Scope } from "../../src/commands/connect-hosts.ts";

const linux: HostLocationFacts = { platform: "linux", env: {}, home: "/home/ann", cwd: "/work/proj" };
const darwin: HostLocationFacts = { platform: "darwin", env: {}, home: "/Users/ann", cwd: "/work/proj" };
const windows: HostLocationFacts = {
  platform: "win32",
  env: { APPDATA: "C:\\Users\\ann\\AppData\\Roaming" },
  home: "C:\\Users\\ann",
  cwd: "C:\\work\\proj",
};

function where(id: (typeof HOST_IDS)[number], scope: Scope, facts: HostLocationFacts): [string, string] | string {
  const r = HOSTS[id].file(scope, facts);
  return r.ok ? [r.file.path, r.file.label] : r.reason;
}

describe("user-scope files", () => {
  test.each([
    ["claude-desktop", linux, "Claude Desktop documents no configuration file on linux; name the file with --file PATH"],
    ["claude-desktop", darwin, ["/Users/ann/Library/Application Support/Claude/claude_desktop_config.json", "~/Library/Application Support/Claude/claude_desktop_config.json"]],
    ["claude-desktop", windows, ["C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json", "%APPDATA%\\Claude\\claude_desktop_config.json"]],
    ["claude-code", linux, ["/home/ann/.claude.json", "~/.claude.json"]],
    ["claude-code", windows, ["C:\\Users\\ann\\.claude.json", "%USERPROFILE%\\.claude.json"]],
    ["cursor", darwin, ["/Users/ann/.cursor/mcp.json", "~/.cursor/mcp.json"]],
    ["cursor", windows, ["C:\\Users\\ann\\.cursor\\mcp.json", "%USERPROFILE%\\.cursor\\mcp.json"]],
    ["codex", linux, ["/home/ann/.codex/config.toml", "~/.codex/config.toml"]],
    ["codex", windows, ["C:\\Users\\ann\\.codex\\config.toml", "%USERPROFILE%\\.codex\\config.toml"]],
    ["vscode", linux, ["/home/ann/.config/Code/User/mcp.json", "~/.config/Code/User/mcp.json"]],
    ["vscode", darwin, ["/Users/ann/Library/Application Support/Code/User/mcp.json", "~/Library/Application Support/Code/User/mcp.json"]],
    ["vscode", windows, ["C:\\Users\\ann\\AppData\\Roaming\\Code\\User\\mcp.json", "%APPDATA%\\Code\\User\\mcp.json"]],
    ["gemini", linux, ["/home/ann/.gemini/settings.json", "~/.gemini/settings.json"]],
    ["gemini", windows, ["C:\\Users\\ann\\.gemini\\settings.json", "%USERPROFILE%\\.gemini\\settings.json"]],
  ] as const)("%s on %o", (id, facts, expected) => {
    expect(where(id, "user", facts)).toEqual(expected as never);
  });

  test("the documented environment overrides, when absolute", () => {
    const env = { CODEX_HOME: "/srv/codex", CLAUDE_CONFIG_DIR: "/srv/claude", XDG_CONFIG_HOME: "/srv/xdg" };
    const facts = { ...linux, env };
    expect(where("codex", "user", facts)).toEqual(["/srv/codex/config.toml", "$CODEX_HOME/config.toml"]);
    expect(where("claude-code", "user", facts)).toEqual(["/srv/claude/.claude.json", "$CLAUDE_CONFIG_DIR/.claude.json"]);
    expect(where("vscode", "user", facts)).toEqual(["/srv/xdg/Code/User/mcp.json", "$XDG_CONFIG_HOME/Code/User/mcp.json"]);
    const relative = { ...linux, env: { CODEX_HOME: "rel", CLAUDE_CONFIG_DIR: "", XDG_CONFIG_HOME: "x/y" } };
    expect(where("codex", "user", relative)).toEqual(["/home/ann/.codex/config.toml", "~/.codex/config.toml"]);
    expect(where("claude-code", "user", relative)).toEqual(["/home/ann/.claude.json", "~/.claude.json"]);
    expect(where("vscode", "user", relative)).toEqual(["/home/ann/.config/Code/User/mcp.json", "~/.config/Code/User/mcp.json"]);
    expect(where("claude-desktop", "user", { ...windows, env: {} })).toEqual([
      "C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
      "%USERPROFILE%\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
    ]);
  });
});

describe("project-scope files", () => {
  test.each([
    ["claude-code", ".mcp.json"],
    ["cursor", ".cursor/mcp.json"],
    ["codex", ".codex/config.toml"],
    ["vscode", ".vscode/mcp.json"],
    ["gemini", ".gemini/settings.json"],
  ] as const)("%s: %s in the current directory", (id, rel) => {
    expect(HOSTS[id].scopes).toContain("project");
    expect(where(id, "project", linux)).toEqual([`/work/proj/${rel}`, rel]);
  });

  test("Claude Desktop has only a user file", () => {
    expect(HOSTS["claude-desktop"].scopes).toEqual(["user"]);
  });
});

describe("entries", () => {
  const cmd = { command: "/usr/bin/serverfs", args: ["serve", "--config", "/c.toml"] };
  test("VS Code and Claude Code entries say stdio; the others are command and args", () => {
    for (const id of HOST_IDS) {
      const expected = id === "vscode" || id === "claude-code" ? { type: "stdio", ...cmd } : cmd;
      expect(HOSTS[id].entry(cmd)).toEqual(expected);
    }
    expect(HOSTS.vscode.format).toEqual({ kind: "json", key: "servers", syntax: { comments: true, trailingCommas: true } });
    expect(HOSTS.codex.format).toEqual({ kind: "toml", table: "mcp_servers" });
  });
});

describe("docs/hosts.md", () => {
  const REPO = path.resolve(import.meta.dir, "../..");
  const doc = fs.readFileSync(path.join(REPO, "docs/hosts.md"), "utf8");

  test("has a section per host, naming its files as connect names them", () => {
    for (const id of HOST_IDS) expect(doc).toContain(`(\`${id}\`)`);
    // The labels connect prints for the user files (checked against the table above).
    for (const label of ["~/Library/Application Support/Claude/claude_desktop_config.json", "%APPDATA%\\Claude\\claude_desktop_config.json", "~/.claude.json", ".mcp.json", "~/.cursor/mcp.json", "~/.codex/config.toml", "$CODEX_HOME/config.toml", "~/.config/Code/User/mcp.json", "%APPDATA%\\Code\\User\\mcp.json", "~/.gemini/settings.json"]) {
      expect(doc).toContain(`\`${label}\``);
    }
  });

  test("lists every code connect raises in its error table", () => {
    const sources = fs.readdirSync(path.join(REPO, "src/commands")).filter((f) => f.startsWith("connect"));
    const codes = new Set<string>();
    for (const f of sources) {
      for (const m of fs.readFileSync(path.join(REPO, "src/commands", f), "utf8").matchAll(/"(HOST_[A-Z_]+|IO_ERROR)"/g)) codes.add(m[1]!);
    }
    expect([...codes].sort()).toEqual(["HOST_CONFIG_INVALID", "HOST_CONFIG_UNEDITABLE", "HOST_ENTRY_EXISTS", "IO_ERROR"]);
    for (const code of [...codes, "USAGE_ERROR", "CONFIGURATION_ERROR"]) expect(doc).toMatch(new RegExp(`^\\| \`${code}\` \\| [12] \\|`, "m"));
  });
});
