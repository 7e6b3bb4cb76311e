#!/usr/bin/env bun
// Entry point: parse the command word, dispatch, and turn every failure into one line on
// stderr plus an exit code. A stack trace is shown only with SERVERFS_DEBUG=1.
import type { CommandSpec } from "./commands/args.ts";
import { commandHelp } from "./commands/help.ts";
import { COMMANDS } from "./commands/registry.ts";
import { HELP } from "./commands/specs.ts";
import { didYouMean } from "./common/did-you-mean.ts";
import { ServerfsError } from "./errors.ts";
import { VERSION } from "./version.ts";

const EXIT_USAGE = 2;

function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.spec.summary}`);
  return [
    `serverfs ${VERSION}: host directories for AI assistants over MCP, and a bridge to coding agents`,
    "",
    "usage: serverfs <command> [flags]",
    "",
    "commands:",
    ...lines,
    `  ${"help".padEnd(width)}  ${HELP.summary}`,
    "",
    "serverfs --version prints the version. Run 'serverfs help <command>' for a command's flags.",
    "Every usage error prints one line on stderr and exits 2.",
  ].join("\n");
}

/** Write all of `text` to stdout before resolving (process.exit right after a write loses data). */
function writeStdout(text: string): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdout.write(text)) resolve();
    else process.stdout.once("drain", () => resolve());
  });
}

export async function main(argv: string[]): Promise<number> {
  const [word, ...rest] = argv;
  if (word === undefined) {
    process.stderr.write(`${helpText()}\n`);
    return EXIT_USAGE;
  }
  if (word === "--version" || word === "-V" || word === "version") {
    if (rest.length > 0) return fail(new ServerfsError("USAGE_ERROR", "--version takes no arguments"));
    await writeStdout(`serverfs ${VERSION}\n`);
    return 0;
  }
  if (word === "help" || word === "--help" || word === "-h") {
    if (rest.length === 0) {
      await writeStdout(`${helpText()}\n`);
      return 0;
    }
    const topic = helpTopic(rest);
    if (topic instanceof ServerfsError) return fail(topic);
    await writeStdout(`${commandHelp(topic)}\n`);
    return 0;
  }
  if (word === "__fake-provider") {
    // Hidden: the fake runtime's provider process inside a compiled binary (src/runtimes/fake/adapter.ts).
    const { runFakeProvider } = await import("./runtimes/fake/provider.ts");
    await runFakeProvider();
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, word) ? COMMANDS[word] : undefined;
  if (!entry) {
    const hint = didYouMean(word, [...Object.keys(COMMANDS), "help", "version"]);
    return fail(new ServerfsError("USAGE_ERROR", `unknown command '${word}'${hint || " (run 'serverfs help' for the list)"}`));
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    // `tasks list --help` is the subcommand's help; a word that names none is the command's.
    const sub = entry.spec.subcommands && rest[0] !== undefined && Object.hasOwn(entry.spec.subcommands, rest[0]) ? entry.spec.subcommands[rest[0]] : undefined;
    await writeStdout(`${commandHelp(sub ?? entry.spec)}\n`);
    return 0;
  }
  try {
    const mod = await entry.load();
    return await mod.main(rest);
  } catch (err) {
    return fail(err, word);
  }
}

/** The spec `help COMMAND [SUBCOMMAND]` names, or the usage error saying why none. */
function helpTopic(words: string[]): CommandSpec | ServerfsError {
  const [name, subName, ...extra] = words as [string, ...string[]];
  const commands: Record<string, CommandSpec> = { ...Object.fromEntries(Object.entries(COMMANDS).map(([n, c]) => [n, c.spec])), help: HELP };
  const spec = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!spec) {
    const hint = didYouMean(name, Object.keys(commands));
    return new ServerfsError("USAGE_ERROR", `unknown help topic '${name}'${hint || " (run 'serverfs help' for the list)"}`);
  }
  if (subName === undefined) return spec;
  const subs = spec.subcommands ?? {};
  const sub = Object.hasOwn(subs, subName) ? subs[subName] : undefined;
  if (!sub) {
    const names = Object.keys(subs);
    const known = names.length === 0 ? ` ('${name}' has no subcommands)` : didYouMean(subName, names) || ` (one of ${names.join(", ")})`;
    return new ServerfsError("USAGE_ERROR", `unknown help topic '${name} ${subName}'${known}`);
  }
  if (extra.length > 0) return new ServerfsError("USAGE_ERROR", `unexpected argument '${extra[0]}' (run 'serverfs help help')`);
  return sub;
}

/** Map an error to exit code and one diagnostic line. */
export function fail(err: unknown, command?: string): number {
  const prefix = command ? `serverfs: ${command}` : "serverfs";
  if (err instanceof ServerfsError) {
    process.stderr.write(`${prefix}: ${err.code}: ${err.message}\n`);
    if (process.env.SERVERFS_DEBUG === "1" && err.stack) process.stderr.write(`${err.stack}\n`);
    if (err.code === "USAGE_ERROR" || err.code === "CONFIGURATION_ERROR") return EXIT_USAGE;
    return 1;
  }
  process.stderr.write(`${prefix}: INTERNAL_ERROR: unexpected internal error\n`);
  if (process.env.SERVERFS_DEBUG === "1") process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
}

if (import.meta.main) {
  const code = await main(process.argv.slice(2));
  // Let pending stdout drain; exiting via exitCode never truncates output.
  process.exitCode = code;
}
