// `serverfs connect` through the real CLI (bun src/cli.ts as a child process), with HOME, the
// working directory and every host file in temp directories: the printed entry for each host,
// --write on real files that hold other servers, keys and comments (the rest byte for byte, the
// backup, the file's mode), the refusals (an existing entry without --force, a file the host
// could not read: a coded error, the file unchanged, no backup, no temp file), the documented
// default locations, and an entry written by connect starting a working serve.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { parse as parseToml } from "smol-toml";
import { bareEnv, connectServe } from "../support/mcp.ts";
import { BUN, CLI, runCli, type CliResult } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";

// Temp directories are removed when the test process exits (test/support/temp.ts).
// Real processes on a shared 2-core machine: a bound, not a timing assertion.
setDefaultTimeout(60_000);

interface Sandbox {
  home: string;
  cwd: string;
  env: Record<string, string>;
}

function sandbox(extraEnv: Record<string, string> = {}): Sandbox {
  const home = tempDir("sfs-connect-home-");
  const cwd = tempDir("sfs-connect-cwd-");
  return { home, cwd, env: { ...bareEnv(home), SERVERFS_DEBUG: "", ...extraEnv } };
}

function connect(sb: Sandbox, args: string[]): CliResult {
  return runCli(["connect", ...args], { cwd: sb.cwd, env: sb.env });
}

/** Every name in a directory, sorted (temp files start with "." and would show). */
function names(dir: string): string[] {
  return fs.readdirSync(dir).sort();
}

/** What serverfs left in HOME: bun itself keeps its install cache in ~/.bun. */
function homeNames(sb: Sandbox): string[] {
  return names(sb.home).filter((n) => n !== ".bun");
}

/** `"name": value` as the editor writes it: the file's two-space step, continuation lines at `indent`. */
function block(name: string, value: unknown, indent: string): string {
  return `${JSON.stringify(name)}: ${JSON.stringify(value, null, 2).split("\n").join(`\n${indent}`)}`;
}

const NPX_ARGS = ["-y", "serverfs", "serve", "--workdir", "docs=~/docs"];
const npxEntry = (typed: boolean) => (typed ? { type: "stdio", command: "npx", args: NPX_ARGS } : { command: "npx", args: NPX_ARGS });

describe("printing the entry", () => {
  const hosts = [
    ["claude-desktop", "mcpServers", false],
    ["claude-code", "mcpServers", true],
    ["cursor", "mcpServers", false],
    ["vscode", "servers", true],
    ["gemini", "mcpServers", false],
  ] as const;

  test.each(hosts)("%s: the JSON document with this serverfs (bun + script from a checkout) on stdout", (host, key, typed) => {
    const sb = sandbox();
    const r = connect(sb, [host, "--workdir", "docs=~/docs", "--workdir", "app=app:rw"]);
    expect(r.code).toBe(0);
    const args = [CLI, "serve", "--workdir", "docs=~/docs", "--workdir", `app=${path.join(sb.cwd, "app")}:rw`];
    const entry = typed ? { type: "stdio", command: BUN, args } : { command: BUN, args };
    expect(r.stdout).toBe(`${JSON.stringify({ [key]: { serverfs: entry } }, null, 2)}\n`);
    expect(r.stderr).toContain(`serverfs: connect: this serverfs runs from a checkout (bun src/cli.ts), so the entry starts ${BUN} with ${CLI}`);
    expect(r.stderr).toContain(`merge this under "${key}" into `);
    expect(homeNames(sb)).toEqual([]);
  });

  test("claude-code also shows the claude mcp add command for the scope", () => {
    const sb = sandbox();
    const r = connect(sb, ["claude-code", "--npx", "--workdir", "docs=/srv/my docs"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("into ~/.claude.json");
    expect(r.stderr).toContain("serverfs: connect: or run: claude mcp add --scope user serverfs -- npx -y serverfs serve --workdir 'docs=/srv/my docs'\n");
    const project = connect(sb, ["claude-code", "--npx", "--scope", "project", "--workdir", "docs=/srv/d"]);
    expect(project.stderr).toContain("into .mcp.json");
    expect(project.stderr).toContain("claude mcp add --scope project serverfs -- npx -y serverfs serve --workdir docs=/srv/d\n");
  });

  test("codex: the TOML table; --npx and a relative --config made absolute", () => {
    const sb = sandbox();
    fs.writeFileSync(path.join(sb.cwd, "serverfs.toml"), '[[workdirs]]\nalias = "docs"\npath = "/srv/docs"\n');
    const r = connect(sb, ["codex", "--npx", "--config", "serverfs.toml"]);
    expect(r.code).toBe(0);
    const config = path.join(sb.cwd, "serverfs.toml");
    expect(r.stdout).toBe(`[mcp_servers.serverfs]\ncommand = "npx"\nargs = ["-y", "serverfs", "serve", "--config", ${JSON.stringify(config)}]\n`);
    expect(parseToml(r.stdout)).toEqual({ mcp_servers: { serverfs: { command: "npx", args: ["-y", "serverfs", "serve", "--config", config] } } });
    expect(r.stderr).toContain("merge this into ~/.codex/config.toml");
    expect(r.stderr).not.toContain("checkout");
  });
});

describe("the flags are checked as serve checks them", () => {
  test.each([
    [["--workdir", "noequals"]],
    [["--workdir", "1bad=/x"]],
    [["--workdir", "a=../up"]],
    [["--workdir", "a=/x", "--workdir", "a=/y"]],
    [["--config", "missing.toml"]],
    [["--config", "bad.toml"]],
  ])("%j: serve's coded error, nothing on stdout, nothing written", (flags) => {
    const sb = sandbox();
    fs.writeFileSync(path.join(sb.cwd, "bad.toml"), '[[workdirs]]\nalias = "a"\npath = "relative"\n');
    const target = path.join(sb.cwd, "mcp.json");
    fs.writeFileSync(target, "{}\n");
    const served = runCli(["serve", ...flags], { cwd: sb.cwd, env: sb.env });
    const printed = connect(sb, ["cursor", ...flags]);
    const written = connect(sb, ["cursor", ...flags, "--write", "--file", target]);
    for (const r of [printed, written]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^serverfs: connect: CONFIGURATION_ERROR: /);
      expect(r.stderr.replace("serverfs: connect: ", "")).toBe(served.stderr.replace("serverfs: serve: ", ""));
    }
    expect(fs.readFileSync(target, "utf8")).toBe("{}\n");
    expect(names(sb.cwd)).toEqual(["bad.toml", "mcp.json"]);
  });

  test.each([
    [[], "connect needs a host: claude-desktop, claude-code, cursor, codex, vscode, gemini"],
    [["zed", "--workdir", "a=/x"], "unknown host 'zed'"],
    [["cursor"], "connect needs --config FILE or at least one --workdir"],
    [["cursor", "--config", "c.toml", "--workdir", "a=/x"], "give either --config FILE or --workdir, not both"],
    [["cursor", "--workdir", "a=/x", "--force"], "--force and --file apply only with --write"],
    [["cursor", "--workdir", "a=/x", "--scope", "global"], "--scope 'global' is not one of user, project"],
    [["claude-desktop", "--workdir", "a=/x", "--scope", "project"], "Claude Desktop has no project configuration file"],
    [["claude-desktop", "--workdir", "a=/x", "--write"], "Claude Desktop documents no configuration file on linux; name the file with --file PATH"],
  ])("%j: USAGE_ERROR, exit 2", (args, message) => {
    if (process.platform !== "linux" && String(message).includes("on linux")) return;
    const sb = sandbox();
    const r = connect(sb, args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith("serverfs: connect: USAGE_ERROR: ");
    expect(r.stderr).toContain(message);
    expect(homeNames(sb)).toEqual([]);
  });
});

const STRICT_FILE = [
  "{",
  '  "globalShortcut": "Ctrl+Space",',
  '  "mcpServers": {',
  '    "filesystem": {',
  '      "command": "npx",',
  '      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/ann/Desktop"]',
  "    },",
  '    "git": { "command": "uvx", "args": ["mcp-server-git"] }',
  "  },",
  '  "preferences": { "sidebarMode": "chat" }',
  "}",
  "",
].join("\n");
const strictExpected = (entry: unknown) =>
  STRICT_FILE.replace(
    '    "git": { "command": "uvx", "args": ["mcp-server-git"] }\n',
    `    "git": { "command": "uvx", "args": ["mcp-server-git"] },\n    ${block("serverfs", entry, "    ")}\n`,
  );

// Claude Code's ~/.claude.json: its own state around the user-scope servers, and a project's
// local-scope servers under the same key name, which must not be touched.
const CLAUDE_JSON = [
  "{",
  '  "numStartups": 12,',
  '  "projects": {',
  '    "/home/ann/app": {',
  '      "mcpServers": { "local-db": { "type": "stdio", "command": "db-mcp", "args": [] } },',
  '      "allowedTools": []',
  "    }",
  "  },",
  '  "mcpServers": {',
  '    "context7": { "type": "stdio", "command": "npx", "args": ["-y", "@upstash/context7-mcp"], "env": {} }',
  "  }",
  "}",
  "",
].join("\n");

const VSCODE_FILE = [
  "// My MCP servers (VS Code)",
  "{",
  '  "inputs": [',
  '    { "type": "promptString", "id": "token", "password": true }, // asked once',
  "  ],",
  '  "servers": {',
  "    /* the docs server */",
  '    "docs": {',
  '      "type": "stdio",',
  '      "command": "node",',
  '      "args": ["docs.js"], // trailing comma, as VS Code allows',
  "    },",
  '    // "old": { "command": "gone" },',
  "  },",
  "}",
  "",
].join("\n");

const GEMINI_FILE = [
  "{",
  '  // Gemini CLI strips comments before parsing',
  '  "theme": "Dracula",',
  '  "mcpServers": {',
  '    "git": { "command": "uvx", "args": ["mcp-server-git"] } /* git */',
  "  }",
  "}",
  "",
].join("\n");

const CODEX_FILE = [
  "# Codex settings",
  'model = "o3"   # the model',
  "",
  "[mcp_servers.docs]",
  'command = "node"',
  'args = ["docs.js"]',
  "",
  "# the git server",
  "[mcp_servers.git]",
  'command = "git-mcp"',
  "",
  "[profiles.fast]",
  'model = "o4-mini"',
  "",
].join("\n");

interface WriteCase {
  host: string;
  original: string;
  expected: string;
}

const writeCases: WriteCase[] = [
  { host: "claude-desktop", original: STRICT_FILE, expected: strictExpected(npxEntry(false)) },
  { host: "cursor", original: STRICT_FILE, expected: strictExpected(npxEntry(false)) },
  {
    host: "claude-code",
    original: CLAUDE_JSON,
    expected: CLAUDE_JSON.replace(
      '"env": {} }\n  }',
      `"env": {} },\n    ${block("serverfs", npxEntry(true), "    ")}\n  }`,
    ),
  },
  {
    host: "vscode",
    original: VSCODE_FILE,
    expected: VSCODE_FILE.replace('  },\n}\n', `    ${block("serverfs", npxEntry(true), "    ")}\n  },\n}\n`),
  },
  {
    host: "gemini",
    original: GEMINI_FILE,
    expected: GEMINI_FILE.replace(
      '["mcp-server-git"] } /* git */\n',
      `["mcp-server-git"] }, /* git */\n    ${block("serverfs", npxEntry(false), "    ")}\n`,
    ),
  },
  {
    host: "codex",
    original: CODEX_FILE,
    expected: `${CODEX_FILE}\n[mcp_servers.serverfs]\ncommand = "npx"\nargs = ["-y", "serverfs", "serve", "--workdir", "docs=~/docs"]\n`,
  },
];

describe("--write on a file with other servers", () => {
  test.each(writeCases)("$host: only the entry is added; backup of the old bytes with the same mode; no temp file", ({ host, original, expected }) => {
    const sb = sandbox();
    const file = path.join(sb.cwd, host === "codex" ? "config.toml" : "config.json");
    fs.writeFileSync(file, original, { mode: 0o640 });
    fs.chmodSync(file, 0o640);
    const r = connect(sb, [host, "--npx", "--workdir", "docs=~/docs", "--write", "--file", file]);
    expect(r.stdout).toBe("");
    expect(r.code).toBe(0);
    expect(fs.readFileSync(file, "utf8")).toBe(expected);
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    const listing = names(sb.cwd);
    expect(listing).toHaveLength(2);
    const backup = listing.find((n) => n !== path.basename(file))!;
    expect(backup).toMatch(new RegExp(`^${path.basename(file).replace(".", "\\.")}\\.serverfs-backup-\\d{8}T\\d{6}Z$`));
    expect(fs.readFileSync(path.join(sb.cwd, backup), "utf8")).toBe(original);
    expect(fs.statSync(path.join(sb.cwd, backup)).mode & 0o777).toBe(0o640);
    expect(r.stderr).toBe(`serverfs: connect: added serverfs to ${file} (the old file is kept as ${path.join(sb.cwd, backup)}); restart ${hostName(host)} to load it\n`);
  });

  test.each(writeCases)("$host: an existing serverfs entry is refused without --force, file unchanged, no backup", ({ host, expected }) => {
    const sb = sandbox();
    const file = path.join(sb.cwd, "host-config");
    fs.writeFileSync(file, expected);
    const r = connect(sb, [host, "--npx", "--workdir", "docs=/srv/other", "--write", "--file", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith(`serverfs: connect: HOST_ENTRY_EXISTS: ${file}: already has a `);
    expect(r.stderr).toContain("pass --force to replace it");
    expect(fs.readFileSync(file, "utf8")).toBe(expected);
    expect(names(sb.cwd)).toEqual(["host-config"]);
  });

  test.each(writeCases)("$host: --force replaces only the old entry, after a backup", ({ host, expected }) => {
    const sb = sandbox();
    const file = path.join(sb.cwd, "host-config");
    fs.writeFileSync(file, expected);
    const r = connect(sb, [host, "--npx", "--workdir", "docs=/srv/other:rw", "--write", "--force", "--file", file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`replaced the serverfs entry in ${file}`);
    const after = fs.readFileSync(file, "utf8");
    const newArgs = ["-y", "serverfs", "serve", "--workdir", "docs=/srv/other:rw"];
    // The same file as a first --write with the new flags would have made from the original.
    const fresh = expected.split(JSON.stringify("docs=~/docs")).join(JSON.stringify("docs=/srv/other:rw"));
    expect(after).toBe(fresh);
    expect(after).not.toContain("docs=~/docs");
    expect(after.split(JSON.stringify(newArgs[4]!)).length).toBe(2);
    const backups = names(sb.cwd).filter((n) => n.startsWith("host-config.serverfs-backup-"));
    expect(backups).toHaveLength(1);
    expect(fs.readFileSync(path.join(sb.cwd, backups[0]!), "utf8")).toBe(expected);
  });
});

function hostName(id: string): string {
  return ({ "claude-desktop": "Claude Desktop", "claude-code": "Claude Code", cursor: "Cursor", codex: "Codex", vscode: "VS Code", gemini: "Gemini CLI" } as Record<string, string>)[id]!;
}

describe("a file the host could not read is refused: coded error, file unchanged, no backup, no temp file", () => {
  test.each([
    ["claude-desktop", '{\n  "mcpServers": {\n    "a": { "command": "x" },\n  }\n}\n', "HOST_CONFIG_INVALID", "not valid JSON (line 4, column 3"],
    ["claude-code", '{\n  // a comment\n  "mcpServers": {}\n}\n', "HOST_CONFIG_INVALID", "not valid JSON (line 2, column 3: a comment"],
    ["cursor", '{ "mcpServers": { "a": { "command": "x" } }', "HOST_CONFIG_INVALID", "a closing brace was expected"],
    ["vscode", '{ "servers": { "a": { "command": "x" ] } }', "HOST_CONFIG_INVALID", "not valid JSON with comments"],
    ["gemini", '{ "mcpServers": [] }', "HOST_CONFIG_INVALID", '"mcpServers" is not an object'],
    ["codex", '# settings\nmodel = "o3"\n[mcp_servers.docs\ncommand = "node"\n', "HOST_CONFIG_INVALID", "not valid TOML (line 3"],
    ["codex", 'mcp_servers = { docs = { command = "node" } }\n', "HOST_CONFIG_UNEDITABLE", "inline table"],
    ["cursor", "\u00ff\u00fe{}", "HOST_CONFIG_INVALID", ""],
  ])("%s: %j", (host, text, code, why) => {
    const sb = sandbox();
    const file = path.join(sb.cwd, "host-config");
    const bytes = text.startsWith("\u00ff") ? Buffer.from([0xff, 0xfe, 0x7b, 0x7d]) : Buffer.from(text);
    fs.writeFileSync(file, bytes);
    const r = connect(sb, [host, "--npx", "--workdir", "docs=~/docs", "--write", "--force", "--file", file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith(`serverfs: connect: ${code}: ${file}: `);
    expect(r.stderr).toContain(why);
    expect(r.stderr).toEndWith("; nothing was written\n");
    expect(r.stderr).not.toContain("    at ");
    expect(fs.readFileSync(file).equals(bytes)).toBe(true);
    expect(names(sb.cwd)).toEqual(["host-config"]);
  });

  test("a symbolic link is not replaced: HOST_CONFIG_UNEDITABLE, its target unchanged", () => {
    const sb = sandbox();
    const real = path.join(sb.cwd, "real.json");
    fs.writeFileSync(real, "{}\n");
    fs.symlinkSync(real, path.join(sb.cwd, "link.json"));
    const r = connect(sb, ["cursor", "--npx", "--workdir", "docs=~/docs", "--write", "--file", "link.json"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "serverfs: connect: HOST_CONFIG_UNEDITABLE: link.json: is a symbolic link, which serverfs does not replace; pass the file it points to with --file; nothing was written\n",
    );
    expect(fs.readFileSync(real, "utf8")).toBe("{}\n");
    expect(names(sb.cwd)).toEqual(["link.json", "real.json"]);
  });
});

describe("the documented default files (HOME, the project and the overrides are temp directories)", () => {
  test.each([
    ["claude-code", [], (sb: Sandbox) => path.join(sb.home, ".claude.json"), "~/.claude.json"],
    ["claude-code", ["--scope", "project"], (sb: Sandbox) => path.join(sb.cwd, ".mcp.json"), ".mcp.json"],
    ["cursor", [], (sb: Sandbox) => path.join(sb.home, ".cursor", "mcp.json"), "~/.cursor/mcp.json"],
    ["gemini", ["--scope", "project"], (sb: Sandbox) => path.join(sb.cwd, ".gemini", "settings.json"), ".gemini/settings.json"],
    ["vscode", [], (sb: Sandbox) => path.join(sb.home, ".config", "Code", "User", "mcp.json"), "~/.config/Code/User/mcp.json"],
    ["codex", [], (sb: Sandbox) => path.join(sb.home, ".codex", "config.toml"), "~/.codex/config.toml"],
  ] as const)("%s %j: created (with its directories, mode 0600) where the host reads it", (host, scope, where, label) => {
    if (process.platform !== "linux") return; // the Linux locations; the others are checked in connect-hosts.test.ts
    const sb = sandbox();
    const r = connect(sb, [host, ...scope, "--npx", "--workdir", "docs=~/docs", "--write"]);
    expect(r.stderr).toBe(`serverfs: connect: created ${label}; restart ${hostName(host)} to load it\n`);
    expect(r.code).toBe(0);
    const file = where(sb);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, "utf8");
    const servers = host === "codex" ? (parseToml(text).mcp_servers as Record<string, unknown>) : JSON.parse(text)[host === "vscode" ? "servers" : "mcpServers"];
    expect(servers).toEqual({ serverfs: host === "codex" ? npxEntry(false) : npxEntry(host === "claude-code" || host === "vscode") });
    expect(names(path.dirname(file)).filter((n) => n !== ".bun")).toEqual([path.basename(file)]);
  });

  test("--file ~/name is a file in HOME", () => {
    const sb = sandbox();
    const r = connect(sb, ["gemini", "--npx", "--workdir", "docs=~/docs", "--write", "--file", "~/gemini.json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(sb.home, "gemini.json"), "utf8"))).toEqual({ mcpServers: { serverfs: npxEntry(false) } });
    expect(names(sb.cwd)).toEqual([]);
  });

  test("CODEX_HOME and CLAUDE_CONFIG_DIR are where Codex and Claude Code keep their files when set", () => {
    const sb = sandbox();
    const codexHome = tempDir("sfs-connect-codex-");
    const claudeDir = tempDir("sfs-connect-claude-");
    sb.env.CODEX_HOME = codexHome;
    sb.env.CLAUDE_CONFIG_DIR = claudeDir;
    expect(connect(sb, ["codex", "--npx", "--workdir", "docs=~/docs", "--write"]).stderr).toBe(
      "serverfs: connect: created $CODEX_HOME/config.toml; restart Codex to load it\n",
    );
    expect(connect(sb, ["claude-code", "--npx", "--workdir", "docs=~/docs", "--write"]).code).toBe(0);
    expect(names(codexHome)).toEqual(["config.toml"]);
    expect(names(claudeDir)).toEqual([".claude.json"]);
    expect(homeNames(sb)).toEqual([]);
  });
});

describe("the written entry starts a working serve", () => {
  test("claude-code --scope project: the .mcp.json entry (bun + src/cli.ts) serves the workdir over MCP", async () => {
    const sb = sandbox();
    fs.mkdirSync(path.join(sb.home, "docs"));
    fs.writeFileSync(path.join(sb.home, "docs", "readme.txt"), "written by connect\n");
    const r = connect(sb, ["claude-code", "--scope", "project", "--workdir", "docs=~/docs", "--write"]);
    expect(r.code).toBe(0);
    const entry = JSON.parse(fs.readFileSync(path.join(sb.cwd, ".mcp.json"), "utf8")).mcpServers.serverfs as { type: string; command: string; args: string[] };
    expect(entry).toEqual({ type: "stdio", command: BUN, args: [CLI, "serve", "--workdir", "docs=~/docs"] });
    // Started the way a host starts it: elsewhere, with a minimal environment.
    const serve = await connectServe({ spawn: { command: entry.command, args: entry.args }, cwd: tempDir(), env: bareEnv(sb.home) });
    try {
      const read = await serve.call("read_text_file", { workdir: "docs", path: "readme.txt" });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain("written by connect");
    } finally {
      await serve.close();
    }
  });
});
