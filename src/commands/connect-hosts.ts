// The MCP hosts `serverfs connect` knows: where each keeps its MCP servers (per OS and scope),
// under which key, in which syntax, and what one server entry looks like there. Facts about the
// hosts, checked against each host's documentation (docs/hosts.md lists the sources); a pure
// table with the OS, environment and home directory passed in, so every OS's answer is testable
// on any OS.
import * as nodePath from "node:path";
import { osKindOf, type OsKind } from "../../platform/os.ts";

export const HOST_IDS = ["claude-desktop", "claude-code", "cursor", "codex", "vscode", "gemini"] as const;
export type HostId = (typeof HOST_IDS)[number];

export const SCOPES = ["user", "project"] as const;
export type Scope = (typeof SCOPES)[number];

/** What JSON a host's parser accepts beyond RFC 8259 (a file it could not read is refused, not edited). */
export interface JsonSyntax {
  comments: boolean;
  trailingCommas: boolean;
}

export type HostFormat =
  | { kind: "json"; key: "mcpServers" | "servers"; syntax: JsonSyntax }
  | { kind: "toml"; table: "mcp_servers" };

/** The command line a host starts serve with. */
export interface ServeCommand {
  command: string;
  args: string[];
}

export interface HostLocationFacts {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** The project directory for `--scope project`. */
  cwd: string;
}

/** A host configuration file: the path to open, and how messages name it (never a resolved home path). */
export interface HostFile {
  path: string;
  label: string;
}

export type HostFileResult = { ok: true; file: HostFile } | { ok: false; reason: string };

export interface HostSpec {
  id: HostId;
  name: string;
  format: HostFormat;
  /** The scopes with a documented file; the first is the default. */
  scopes: readonly Scope[];
  /** One server entry, as the host's file holds it under its key. */
  entry(cmd: ServeCommand): Record<string, unknown>;
  file(scope: Scope, facts: HostLocationFacts): HostFileResult;
}

const STRICT_JSON: JsonSyntax = { comments: false, trailingCommas: false };
const plainEntry = (cmd: ServeCommand) => ({ command: cmd.command, args: cmd.args });
const stdioEntry = (cmd: ServeCommand) => ({ type: "stdio", command: cmd.command, args: cmd.args });

/** A base directory and how it is written in messages (`~`, `%APPDATA%`, `$CODEX_HOME`). */
interface Base {
  dir: string;
  label: string;
}

function pathsFor(kind: OsKind): typeof nodePath.posix {
  return kind === "windows" ? nodePath.win32 : nodePath.posix;
}

function under(kind: OsKind, base: Base, ...parts: string[]): HostFile {
  const p = pathsFor(kind);
  const sep = kind === "windows" ? "\\" : "/";
  return { path: p.join(base.dir, ...parts), label: [base.label, ...parts].join(sep) };
}

function home(kind: OsKind, facts: HostLocationFacts): Base {
  return { dir: facts.home, label: kind === "windows" ? "%USERPROFILE%" : "~" };
}

/** An environment variable naming a directory, when it is set to an absolute path. */
function envDir(kind: OsKind, facts: HostLocationFacts, name: string): Base | null {
  const value = facts.env[name];
  if (!value || !pathsFor(kind).isAbsolute(value)) return null;
  return { dir: value, label: kind === "windows" ? `%${name}%` : `$${name}` };
}

/** %APPDATA% on Windows (the roaming profile), else its documented default under the profile. */
function appData(facts: HostLocationFacts): Base {
  return envDir("windows", facts, "APPDATA") ?? { dir: nodePath.win32.join(facts.home, "AppData", "Roaming"), label: "%USERPROFILE%\\AppData\\Roaming" };
}

function project(kind: OsKind, facts: HostLocationFacts, ...parts: string[]): HostFile {
  const p = pathsFor(kind);
  return { path: p.join(facts.cwd, ...parts), label: parts.join(kind === "windows" ? "\\" : "/") };
}

const ok = (file: HostFile): HostFileResult => ({ ok: true, file });

export const HOSTS: Record<HostId, HostSpec> = {
  "claude-desktop": {
    id: "claude-desktop",
    name: "Claude Desktop",
    format: { kind: "json", key: "mcpServers", syntax: STRICT_JSON },
    scopes: ["user"],
    entry: plainEntry,
    file(_scope, facts) {
      const kind = osKindOf(facts.platform);
      if (kind === "darwin") return ok(under(kind, home(kind, facts), "Library", "Application Support", "Claude", "claude_desktop_config.json"));
      if (kind === "windows") return ok(under(kind, appData(facts), "Claude", "claude_desktop_config.json"));
      return { ok: false, reason: `Claude Desktop documents no configuration file on ${facts.platform}; name the file with --file PATH` };
    },
  },
  "claude-code": {
    id: "claude-code",
    name: "Claude Code",
    format: { kind: "json", key: "mcpServers", syntax: STRICT_JSON },
    scopes: ["user", "project"],
    entry: stdioEntry,
    file(scope, facts) {
      const kind = osKindOf(facts.platform);
      if (scope === "project") return ok(project(kind, facts, ".mcp.json"));
      // CLAUDE_CONFIG_DIR moves Claude Code's whole configuration, .claude.json included.
      return ok(under(kind, envDir(kind, facts, "CLAUDE_CONFIG_DIR") ?? home(kind, facts), ".claude.json"));
    },
  },
  cursor: {
    id: "cursor",
    name: "Cursor",
    // Cursor rejects a trailing comma in mcp.json; comments are not documented as accepted.
    format: { kind: "json", key: "mcpServers", syntax: STRICT_JSON },
    scopes: ["user", "project"],
    entry: plainEntry,
    file(scope, facts) {
      const kind = osKindOf(facts.platform);
      if (scope === "project") return ok(project(kind, facts, ".cursor", "mcp.json"));
      return ok(under(kind, home(kind, facts), ".cursor", "mcp.json"));
    },
  },
  codex: {
    id: "codex",
    name: "Codex",
    format: { kind: "toml", table: "mcp_servers" },
    scopes: ["user", "project"],
    entry: plainEntry,
    file(scope, facts) {
      const kind = osKindOf(facts.platform);
      // A project's .codex/config.toml is read only in a project Codex trusts.
      if (scope === "project") return ok(project(kind, facts, ".codex", "config.toml"));
      return ok(under(kind, envDir(kind, facts, "CODEX_HOME") ?? suffixed(kind, home(kind, facts), ".codex"), "config.toml"));
    },
  },
  vscode: {
    id: "vscode",
    name: "VS Code",
    // mcp.json is a VS Code settings file: JSON with comments, trailing commas tolerated.
    format: { kind: "json", key: "servers", syntax: { comments: true, trailingCommas: true } },
    scopes: ["user", "project"],
    entry: stdioEntry,
    file(scope, facts) {
      const kind = osKindOf(facts.platform);
      if (scope === "project") return ok(project(kind, facts, ".vscode", "mcp.json"));
      if (kind === "windows") return ok(under(kind, appData(facts), "Code", "User", "mcp.json"));
      if (kind === "darwin") return ok(under(kind, home(kind, facts), "Library", "Application Support", "Code", "User", "mcp.json"));
      // Electron's per-user data directory on Linux: $XDG_CONFIG_HOME, else ~/.config.
      const config = envDir(kind, facts, "XDG_CONFIG_HOME") ?? suffixed(kind, home(kind, facts), ".config");
      return ok(under(kind, config, "Code", "User", "mcp.json"));
    },
  },
  gemini: {
    id: "gemini",
    name: "Gemini CLI",
    // Gemini CLI strips comments before JSON.parse; a trailing comma still fails.
    format: { kind: "json", key: "mcpServers", syntax: { comments: true, trailingCommas: false } },
    scopes: ["user", "project"],
    entry: plainEntry,
    file(scope, facts) {
      const kind = osKindOf(facts.platform);
      if (scope === "project") return ok(project(kind, facts, ".gemini", "settings.json"));
      return ok(under(kind, home(kind, facts), ".gemini", "settings.json"));
    },
  },
};

function suffixed(kind: OsKind, base: Base, name: string): Base {
  return { dir: pathsFor(kind).join(base.dir, name), label: `${base.label}${kind === "windows" ? "\\" : "/"}${name}` };
}

export function isHostId(value: string): value is HostId {
  return (HOST_IDS as readonly string[]).includes(value);
}
