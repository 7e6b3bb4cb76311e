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
  init: {
    summary: "write a commented starter serverfs.toml",
    usage: "serverfs init [--out FILE]\n\nRefuses to overwrite an existing file.",
    load: () => import("./init.ts"),
  },
};
