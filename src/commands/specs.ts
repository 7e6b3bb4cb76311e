// The command-line table: every command's flags, operands and subcommands. The parser
// (src/commands/args.ts) accepts exactly what is here and help (src/commands/help.ts) prints
// exactly what is here, so the two cannot disagree. Kept free of heavy imports: `serverfs help`
// and `--version` load this file and nothing else.
import { TASK_STATUSES } from "../bridge/lifecycle.ts";
import type { CommandSpec, FlagSpec } from "./args.ts";
import { HOST_IDS, SCOPES } from "./connect-hosts.ts";

/** The largest page the Bridge answers for task.list (src/bridge/service/views.ts). */
const MAX_TASK_PAGE = 500;

const config = (help: string, extra: Partial<FlagSpec> = {}): FlagSpec => ({ value: true, path: true, arg: "FILE", help, ...extra });
const envFile = (help: string): FlagSpec => ({ value: true, path: true, arg: "FILE", help });
const json: FlagSpec = { help: "print one JSON document instead of text" };

export const SERVE: CommandSpec = {
  path: "serve",
  summary: "MCP server over stdio (what an MCP host launches)",
  flags: {
    // Variadic: an MCP Bundle host passes `--config` with nothing after it when the user picked no
    // file (src/config/folder-workdirs.ts); that counts as not given.
    config: config("the serverfs.toml configuration", { variadic: true, atMostOne: true }),
    "env-file": envFile("a .env configuration (WORKDIR_01_ALIAS=..., the same keys render-config reads)"),
    workdir: {
      value: true,
      repeat: true,
      arg: "ALIAS=PATH[:MODE]",
      help: "a workdir; MODE is rw or ro (any case, default ro); repeat for more",
    },
    "workdir-ro": { value: true, variadic: true, arg: "DIR", help: "read-only workdirs, every folder up to the next flag" },
    "workdir-rw": { value: true, variadic: true, arg: "DIR", help: "read-write workdirs, every folder up to the next flag" },
  },
  oneOf: {
    groups: [["config"], ["env-file"], ["workdir", "workdir-ro", "workdir-rw"]],
    missing:
      "serve needs --config FILE, --env-file FILE, or at least one --workdir ALIAS=PATH[:rw], --workdir-ro DIR or --workdir-rw DIR",
    both: "give one of --config FILE, --env-file FILE or workdirs, not several",
    groupNote: "at least one workdir",
  },
  description:
    "Exposes the configured workdirs to an MCP host over stdin/stdout. Read-only unless a\n" +
    "workdir is configured read-write (or given with ':rw'). stdout carries MCP frames only;\n" +
    "one JSON log line per event goes to stderr.\n\n" +
    "In --workdir ALIAS=PATH[:MODE], MODE is the text after the last ':' when that text is only\n" +
    "letters: rw or ro, in any case. Any other letters (':rx') are a usage error, exit 2. A ':'\n" +
    "followed by anything else is part of PATH (C:\\data, /data/x:2024); a PATH that itself ends\n" +
    "in ':letters' is written with a mode after it (/data/x:rx:ro).\n\n" +
    "--workdir-ro and --workdir-rw take every folder up to the next flag (read-only and\n" +
    "read-write); each folder's alias is its own name, fitted to letters, digits, '-' and '_'\n" +
    "and made unique with -2, -3, ... (an MCP Bundle passes the folders its user picked this way).",
};

export const BRIDGE: CommandSpec = {
  path: "bridge",
  summary: "the Agent Bridge daemon, in the foreground",
  flags: {
    config: config("the serverfs.toml configuration"),
    "env-file": envFile("a .env configuration instead"),
  },
  oneOf: {
    groups: [["config"], ["env-file"]],
    missing: "give exactly one of --config FILE or --env-file FILE",
    both: "give exactly one of --config FILE or --env-file FILE",
  },
  description: "Runs the per-user Agent Bridge until SIGTERM or SIGINT.",
};

export const RENDER_CONFIG: CommandSpec = {
  path: "render-config",
  summary: "validate the config and write the normalized private Bridge document",
  flags: {
    config: config("the serverfs.toml configuration"),
    "env-file": envFile("a .env configuration instead"),
    out: { value: true, path: true, arg: "FILE", help: "where to write the document (default: stdout)" },
  },
  oneOf: BRIDGE.oneOf,
  description:
    "Validates the deployment and writes the normalized Bridge document (mode 0600, written\n" +
    "atomically) to --out, or to stdout. Exit 0 when valid, 2 when invalid.",
};

export const DOCTOR: CommandSpec = {
  path: "doctor",
  summary: "read-only diagnosis of config, workdirs, state, Bridge and runtimes",
  flags: {
    config: config("the serverfs.toml configuration"),
    "env-file": envFile("a .env configuration instead"),
    json,
    "probe-acp": { help: "also start each ACP agent briefly (initialize + session/new) and stop it" },
  },
  oneOf: BRIDGE.oneOf,
  description:
    "Read-only: creates and changes nothing. One 'label: OK|WARN|FAIL -- detail' line per check\n" +
    "on stdout (--json: one document). --probe-acp also starts each ACP agent for a bounded\n" +
    "initialize + session/new in a throwaway directory and stops it again.\n" +
    "Exit 0 when clean, 1 on any FAIL, 2 when the config is unreadable or invalid.",
};

const tasksConfig = config("the deployment whose Bridge to ask (default: the per-user state directory)");
const taskId = { name: "ID", help: "a task id" } as const;
const requestId = { name: "REQUEST", help: "a request id" } as const;

export const TASKS: CommandSpec = {
  path: "tasks",
  summary: "the operator's view of Agent tasks",
  flags: {},
  description: "Every subcommand takes --config FILE (default: the per-user state directory) and --json.",
  subcommands: {
    list: {
      path: "tasks list",
      summary: "the newest tasks first",
      flags: {
        status: { value: true, arg: "STATUS", values: TASK_STATUSES, help: "only tasks in this status" },
        limit: { value: true, arg: "N", range: { min: 1, max: MAX_TASK_PAGE }, help: "at most N tasks (default 50)" },
        config: tasksConfig,
        json,
      },
    },
    show: {
      path: "tasks show",
      summary: "one task: status, times, pending request, final response",
      operands: [taskId],
      flags: { config: tasksConfig, json },
    },
    events: {
      path: "tasks events",
      summary: "a task's events in order",
      operands: [taskId],
      flags: {
        after: { value: true, arg: "N", range: { min: 0, max: Infinity }, help: "only events after event N (default 0)" },
        follow: { help: "keep printing new events until the task ends" },
        config: tasksConfig,
        json,
      },
    },
    approve: {
      path: "tasks approve",
      summary: "answer a pending approval",
      operands: [taskId, requestId, { name: "DECISION", help: "a decision", optional: true }],
      flags: {
        option: { value: true, arg: "OPTION_ID", help: "the option to pick, instead of DECISION" },
        grant: { value: true, repeat: true, arg: "PERMISSION_ID", help: "a permission to grant with the answer; repeat for more" },
        config: tasksConfig,
        json,
      },
      description: "Give exactly one of DECISION (as 'tasks show' lists them) or --option OPTION_ID.",
    },
    answer: {
      path: "tasks answer",
      summary: "answer a pending question",
      operands: [taskId, requestId, { name: "QUESTION_ID=OPTION[,OPTION]", help: "answers", optional: true, repeat: true }],
      flags: {
        text: { value: true, repeat: true, arg: "QUESTION_ID=TEXT", help: "free text for a question; repeat for more" },
        decline: { help: "decline an ACP agent's form question (the agent hears decline)" },
        cancel: { help: "cancel an ACP agent's form question (the agent hears cancel)" },
        config: tasksConfig,
        json,
      },
      description:
        "Give at least one QUESTION_ID=OPTION or --text QUESTION_ID=TEXT. For an ACP agent's form question, " +
        "QUESTION_ID is the property name (optional properties may be left out; numbers and text go in --text, " +
        "true/false as an option), or give --decline or --cancel alone.",
    },
    cancel: {
      path: "tasks cancel",
      summary: "cancel a task",
      operands: [taskId],
      flags: { config: tasksConfig, json },
    },
  },
};

const serviceConfig = (required: boolean): FlagSpec =>
  config(required ? "the configuration the Bridge runs with" : "the deployment (default: the per-user state directory)", { required });

export const SERVICE: CommandSpec = {
  path: "service",
  summary: "run the Bridge under the OS service manager for the current user",
  flags: {},
  description:
    "install and status read the configuration, so they need --config FILE; uninstall, start\n" +
    "and stop find the service by the state directory (--config FILE when it is not the default).",
  subcommands: {
    install: {
      path: "service install",
      summary: "install the Bridge as a user service and start it",
      flags: {
        config: serviceConfig(true),
        "allow-root": {
          help: "install even as root (or Windows SYSTEM); the Bridge then runs agents as root",
        },
      },
      description:
        "The Bridge runs agents with the rights of its user, so install refuses root and the Windows\n" +
        "SYSTEM account (SERVICE_ROOT_REFUSED) unless --allow-root says the operator means it, e.g.\n" +
        "in a single-user container where root is the only user.",
    },
    uninstall: { path: "service uninstall", summary: "stop and remove the service", flags: { config: serviceConfig(false) } },
    start: { path: "service start", summary: "start the installed service", flags: { config: serviceConfig(false) } },
    stop: { path: "service stop", summary: "stop the installed service", flags: { config: serviceConfig(false) } },
    status: {
      path: "service status",
      summary: "whether the service is installed and the Bridge answers",
      flags: { config: serviceConfig(true) },
      description: "Exit 0 when the Bridge answers, 3 when it does not.",
    },
  },
};

export const CONNECT: CommandSpec = {
  path: "connect",
  summary: "print or write the entry an MCP host needs to start serve",
  operands: [{ name: "HOST", help: "a host", values: HOST_IDS, kind: "host" }],
  flags: {
    config: config("the configuration serve is started with"),
    workdir: { value: true, repeat: true, arg: "ALIAS=PATH[:MODE]", help: "a workdir serve is started with (as serve takes it)" },
    npx: { help: "start serve with 'npx -y serverfs' instead of this executable" },
    scope: { value: true, arg: "SCOPE", values: SCOPES, help: "whose configuration file (default: user)" },
    write: { help: "merge the entry into the host's configuration file" },
    force: { help: "with --write: replace an existing 'serverfs' entry" },
    file: { value: true, path: true, arg: "PATH", help: "with --write: this file instead of the host's own" },
  },
  oneOf: {
    groups: [["config"], ["workdir"]],
    missing: "connect needs --config FILE or at least one --workdir ALIAS=PATH[:rw] (what the host starts serve with)",
    both: "give either --config FILE or --workdir, not both",
  },
  description:
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
};

export const INIT: CommandSpec = {
  path: "init",
  summary: "write a commented starter serverfs.toml",
  flags: { out: { value: true, path: true, arg: "FILE", help: "where to write it (default: serverfs.toml)" } },
  description: "Refuses to overwrite an existing file.",
};

/** `serverfs help`, which the dispatcher answers itself. */
export const HELP: CommandSpec = {
  path: "help",
  summary: "show help for a command",
  operands: [
    { name: "COMMAND", help: "a command", optional: true },
    { name: "SUBCOMMAND", help: "a subcommand", optional: true },
  ],
  flags: {},
  description:
    "Without COMMAND: every command. With it: that command's usage and flags; with SUBCOMMAND\n" +
    "(serverfs help tasks list): that subcommand's. 'serverfs COMMAND --help' prints the same.\n\n" +
    "Every usage error (an unknown command, flag or value, a missing or out-of-range one)\n" +
    "prints one line on stderr and exits 2.",
};
