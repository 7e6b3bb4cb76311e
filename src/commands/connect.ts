// serverfs connect HOST (--config FILE | --workdir ALIAS=PATH[:rw] ...) [--npx] [--scope user|project]
//                       [--write [--force] [--file PATH]]
// Print the MCP server entry HOST needs to start `serverfs serve` (stdout, in the host's own
// format), or with --write merge it into the host's configuration file (docs/hosts.md).
import os from "node:os";
import path from "node:path";
import { PLATFORM_NAME } from "../../platform/os.ts";
import { editJsonConfig } from "./connect-json-edit.ts";
import { HOST_IDS, HOSTS, isHostId, type HostFile, type HostSpec, type Scope } from "./connect-hosts.ts";
import { serveFlags, serveLaunch, type ServeLaunch } from "./connect-entry.ts";
import { editTomlConfig } from "./connect-toml-edit.ts";
import { writeHostConfig, type TextEditor } from "./connect-write.ts";
import { flag, parseArgs, usage } from "./args.ts";
import { CONNECT } from "./specs.ts";

/** The name the entry has in every host's file. */
export const ENTRY_NAME = "serverfs";

export async function main(argv: string[]): Promise<number> {
  // The table checks HOST is one of HOST_IDS, --scope is user or project, and one source is given.
  const args = parseArgs(argv, CONNECT);
  const hostArg = args.positionals[0]!;
  if (!isHostId(hostArg)) throw usage(`unknown host '${hostArg}' (one of ${HOST_IDS.join(", ")})`);
  const host = HOSTS[hostArg];
  const scope = scopeOf(flag(args, "scope"), host);
  const write = args.switches.has("write");
  const file = flag(args, "file");
  if (!write && (args.switches.has("force") || file !== undefined)) throw usage("--force and --file apply only with --write");
  if (file === "") throw usage("--file needs a file name");

  const flags = await serveFlags({ configFile: flag(args, "config"), workdirs: args.flags.get("workdir") ?? [] });
  const launch = serveLaunch(flags, args.switches.has("npx"));
  const entry = host.entry(launch);
  const target = !write ? null : file !== undefined ? { path: path.resolve(file), label: file } : defaultFile(host, scope);
  if (launch.form === "checkout") {
    note(
      `this serverfs runs from a checkout (bun src/cli.ts), so the entry starts ${launch.command} with ${launch.args[0]}; ` +
        "a compiled serverfs, or --npx, gives an entry that does not depend on this checkout",
    );
  }
  if (target === null) {
    await writeStdout(printed(host, entry));
    printHints(host, scope, launch);
    return 0;
  }
  const outcome = writeHostConfig(target, editorFor(host, entry, args.switches.has("force"), target));
  const what = outcome.created ? "created" : outcome.replaced ? "replaced the serverfs entry in" : "added serverfs to";
  note(`${what} ${target.label}${outcome.backupLabel ? ` (the old file is kept as ${outcome.backupLabel})` : ""}; restart ${host.name} to load it`);
  return 0;
}

function scopeOf(value: string | undefined, host: HostSpec): Scope {
  if (value === undefined) return host.scopes[0]!;
  const scope = value as Scope; // one of SCOPES: the table (src/commands/specs.ts) checked it
  if (!host.scopes.includes(scope)) throw usage(`${host.name} has no ${scope} configuration file; --scope ${host.scopes.join(" or ")}`);
  return scope;
}

function defaultFile(host: HostSpec, scope: Scope): HostFile {
  const found = host.file(scope, { platform: PLATFORM_NAME, env: process.env, home: os.homedir(), cwd: process.cwd() });
  if (!found.ok) throw usage(found.reason);
  return found.file;
}

function editorFor(host: HostSpec, entry: Record<string, unknown>, force: boolean, target: HostFile): TextEditor {
  const format = host.format;
  if (format.kind === "toml") {
    const { command, args } = entry as { command: string; args: string[] };
    return (current) => editTomlConfig(current, { table: format.table, name: ENTRY_NAME, entry: { command, args }, force, label: target.label });
  }
  return (current) => editJsonConfig(current, { key: format.key, name: ENTRY_NAME, entry, syntax: format.syntax, force, label: target.label });
}

/** The entry as the host's file holds it: a JSON document with the servers key, or a TOML table. */
export function printed(host: HostSpec, entry: Record<string, unknown>): string {
  const format = host.format;
  if (format.kind === "toml") {
    const { command, args } = entry as { command: string; args: string[] };
    return editTomlConfig(null, { table: format.table, name: ENTRY_NAME, entry: { command, args }, force: false, label: "" }).text;
  }
  return `${JSON.stringify({ [format.key]: { [ENTRY_NAME]: entry } }, null, 2)}\n`;
}

function printHints(host: HostSpec, scope: Scope, launch: ServeLaunch): void {
  const found = host.file(scope, { platform: PLATFORM_NAME, env: process.env, home: os.homedir(), cwd: process.cwd() });
  const where = found.ok ? found.file.label : `${host.name}'s configuration file (${found.reason})`;
  const under = host.format.kind === "toml" ? "" : ` under "${host.format.key}"`;
  note(`merge this${under} into ${where}, or let 'serverfs connect ${host.id} --write' do it (same flags)`);
  if (host.id === "claude-code") {
    note(`or run: claude mcp add --scope ${scope} ${ENTRY_NAME} -- ${[launch.command, ...launch.args].map(shellWord).join(" ")}`);
  }
}

/** One word for a POSIX shell: as is when it has nothing special, else single-quoted. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function note(text: string): void {
  process.stderr.write(`serverfs: connect: ${text}\n`);
}

function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}
