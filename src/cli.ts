#!/usr/bin/env bun
// Entry point: parse the command word, dispatch, and turn every failure into one line on
// stderr plus an exit code. A stack trace is shown only with SERVERFS_DEBUG=1.
import { COMMANDS } from "./commands/registry.ts";
import { ServerfsError } from "./errors.ts";
import { VERSION } from "./version.ts";

const EXIT_USAGE = 2;

function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    `serverfs ${VERSION}: host directories for AI assistants over MCP, and a bridge to coding agents`,
    "",
    "usage: serverfs <command> [flags]",
    "",
    "commands:",
    ...lines,
    `  ${"help".padEnd(width)}  show help for a command`,
    "",
    "serverfs --version prints the version. Run 'serverfs help <command>' for a command's flags.",
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
    const topic = rest[0];
    if (topic === undefined) {
      await writeStdout(`${helpText()}\n`);
      return 0;
    }
    const entry = COMMANDS[topic];
    if (!entry || rest.length > 1) return fail(new ServerfsError("USAGE_ERROR", `unknown help topic '${rest.join(" ")}'`));
    await writeStdout(`${entry.usage}\n`);
    return 0;
  }
  if (word === "__fake-provider") {
    // Hidden: the fake runtime's provider process inside a compiled binary (src/runtimes/fake/adapter.ts).
    const { runFakeProvider } = await import("./runtimes/fake/provider.ts");
    await runFakeProvider();
    return 0;
  }
  const entry = COMMANDS[word];
  if (!entry) {
    return fail(new ServerfsError("USAGE_ERROR", `unknown command '${word}' (run 'serverfs help')`));
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    await writeStdout(`${entry.usage}\n`);
    return 0;
  }
  try {
    const mod = await entry.load();
    return await mod.main(rest);
  } catch (err) {
    return fail(err, word);
  }
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
