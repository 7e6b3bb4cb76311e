// The command table. Modules are imported lazily so `serverfs --version` and `help` load
// nothing else, and `serve` never pays for what `doctor` or `bridge` import.

export type CommandMain = (argv: string[]) => Promise<number>;

export interface CommandEntry {
  summary: string;
  usage: string;
  load: () => Promise<{ main: CommandMain }>;
}

export const COMMANDS: Record<string, CommandEntry> = {
  serve: {
    summary: "MCP server over stdio (what an MCP host launches)",
    usage:
      "serverfs serve --config FILE\n" +
      "serverfs serve --workdir ALIAS=PATH[:rw] [--workdir ...]\n" +
      "serverfs serve [--workdir-ro DIR ...] [--workdir-rw DIR ...] [--workdir ...]\n\n" +
      "Exposes the configured workdirs to an MCP host over stdin/stdout. Read-only unless a\n" +
      "workdir is configured read-write (or given with ':rw'). stdout carries MCP frames only;\n" +
      "one JSON log line per event goes to stderr.\n\n" +
      "--workdir-ro and --workdir-rw take every folder up to the next flag (read-only and\n" +
      "read-write); each folder's alias is its own name, fitted to letters, digits, '-' and '_'\n" +
      "and made unique with -2, -3, ... (an MCP Bundle passes the folders its user picked this way).",
    load: () => import("./serve.ts"),
  },
  bridge: {
    summary: "the Agent Bridge daemon, in the foreground",
    usage: "serverfs bridge --config FILE\n\nRuns the per-user Agent Bridge until SIGTERM or SIGINT.",
    load: () => import("./bridge.ts"),
  },
  "render-config": {
    summary: "validate the config and write the normalized private Bridge document",
    usage:
      "serverfs render-config (--config FILE | --env-file FILE) [--out FILE]\n\n" +
      "Validates the deployment and writes the normalized Bridge document (mode 0600, written\n" +
      "atomically) to --out, or to stdout. Exit 0 when valid, 2 when invalid.",
    load: () => import("./render-config.ts"),
  },
  doctor: {
    summary: "read-only diagnosis of config, workdirs, state, Bridge and runtimes",
    usage:
      "serverfs doctor (--config FILE | --env-file FILE) [--json] [--probe-acp]\n\n" +
      "Read-only: creates and changes nothing. One 'label: OK|WARN|FAIL -- detail' line per check\n" +
      "on stdout (--json: one document). --probe-acp also starts each ACP agent for a bounded\n" +
      "initialize + session/new in a throwaway directory and stops it again.\n" +
      "Exit 0 when clean, 1 on any FAIL, 2 when the config is unreadable or invalid.",
    load: () => import("./doctor.ts"),
  },
  tasks: {
    summary: "the operator's view of Agent tasks",
    usage:
      "serverfs tasks list [--status STATUS] [--limit N] [--config FILE] [--json]\n" +
      "serverfs tasks show ID | events ID [--after N] [--follow] | cancel ID\n" +
      "serverfs tasks approve ID REQUEST (DECISION | --option OPTION_ID) [--grant PERMISSION_ID ...]\n" +
      "serverfs tasks answer ID REQUEST QUESTION_ID=OPTION[,OPTION] ... [--text QUESTION_ID=TEXT ...]\n\n" +
      "Every subcommand takes --config FILE (default: the per-user state directory) and --json.",
    load: () => import("./tasks.ts"),
  },
  service: {
    summary: "run the Bridge under the OS service manager for the current user",
    usage: "serverfs service install|uninstall|start|stop|status [--config FILE]",
    load: () => import("./service.ts"),
  },
  connect: {
    summary: "print or write the entry an MCP host needs to start serve",
    usage:
      "serverfs connect HOST (--config FILE | --workdir ALIAS=PATH[:rw] ...) [--npx] [--scope user|project]\n" +
      "serverfs connect HOST (--config FILE | --workdir ...) --write [--force] [--file PATH]\n\n" +
      "HOST is claude-desktop, claude-code, cursor, codex, vscode or gemini. Prints the MCP server\n" +
      "entry that starts 'serverfs serve' with the given flags, in the form HOST's configuration file\n" +
      "holds it (stdout). The flags are checked as serve checks them; relative paths become absolute.\n" +
      "The entry runs this serverfs executable (from a checkout: bun with src/cli.ts), or\n" +
      "'npx -y serverfs serve ...' with --npx.\n\n" +
      "--write merges the entry, named 'serverfs', into HOST's configuration file for --scope (user,\n" +
      "the default; project: the current directory) or into --file PATH, creating it if missing.\n" +
      "Every other server, key and comment is kept byte for byte; the old file is kept first as\n" +
      "<file>.serverfs-backup-<UTC time>; the new one replaces it atomically. An existing 'serverfs'\n" +
      "entry is replaced only with --force. A file that is not valid for HOST is refused with\n" +
      "HOST_CONFIG_INVALID and left untouched.\n\n" +
      "User files: claude-desktop claude_desktop_config.json (macOS, Windows; elsewhere --file),\n" +
      "claude-code ~/.claude.json, cursor ~/.cursor/mcp.json, codex ~/.codex/config.toml,\n" +
      "vscode mcp.json in VS Code's user settings folder, gemini ~/.gemini/settings.json.\n" +
      "Project files: .mcp.json, .cursor/mcp.json, .codex/config.toml, .vscode/mcp.json,\n" +
      ".gemini/settings.json. Each host's files and entry: docs/hosts.md.",
    load: () => import("./connect.ts"),
  },
  init: {
    summary: "write a commented starter serverfs.toml",
    usage: "serverfs init [--out FILE]\n\nRefuses to overwrite an existing file.",
    load: () => import("./init.ts"),
  },
};
