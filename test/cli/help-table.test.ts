// Help shows exactly what the parser accepts: for every command and subcommand, every flag in its
// help parses and every other flag is refused; a flag help calls required is refused when missing
// and shown out of brackets in every usage line; an optional one is bracketed and may be left out.
import { describe, expect, test } from "bun:test";
import { parseArgs, type CommandSpec } from "../../src/commands/args.ts";
import { commandHelp } from "../../src/commands/help.ts";
import { COMMANDS } from "../../src/commands/registry.ts";
import { HELP } from "../../src/commands/specs.ts";
import { ServerfsError } from "../../src/errors.ts";
import { runCli } from "../support/proc.ts";

function leaves(spec: CommandSpec): CommandSpec[] {
  return spec.subcommands ? Object.values(spec.subcommands) : [spec];
}
const LEAVES = [...Object.values(COMMANDS).flatMap((c) => leaves(c.spec)), HELP];
const ALL_FLAG_NAMES = [...new Set(LEAVES.flatMap((l) => Object.keys(l.flags)))];

interface HelpFlag {
  name: string;
  status: "required" | "optional" | "alternative";
  takesValue: boolean;
}

/** The flags section of a help text, read as a user reads it. */
function helpFlags(text: string): HelpFlag[] {
  const section = text.split("\nflags:\n")[1];
  if (section === undefined) return [];
  return section
    .split("\n")
    .map((line) => /^ {2}--([a-z-]+)( [A-Z]\S*)?(?: \.\.\.)? +\((required|optional|alternative)\) /.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ name: m[1]!, takesValue: m[2] !== undefined, status: m[3] as HelpFlag["status"] }));
}

function usageLinesOf(text: string): string[] {
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    const m = /^(?:usage: | {7})(serverfs .*)$/.exec(line);
    if (!m) break;
    lines.push(m[1]!);
  }
  return lines;
}

/** A value the parser takes for this flag, read from the help line (its enum or range). */
function valueFor(text: string, name: string): string {
  const line = text.split("\n").find((l) => l.startsWith(`  --${name} `)) ?? "";
  const oneOf = /one of ([a-z_-]+)/.exec(line);
  if (oneOf) return oneOf[1]!;
  const range = /a whole number(?: from|,) (\d+)/.exec(line);
  return range ? range[1]! : "v";
}

/** The argv of the first usage line with every bracketed part left out, as help writes it. */
function minimalArgv(text: string, path: string, flags: HelpFlag[]): string[] {
  const first = usageLinesOf(text)[0]!;
  expect(first).toStartWith(`serverfs ${path}`);
  const rest = first.slice(`serverfs ${path}`.length);
  const words = rest.replace(/\s+\(.*\)$/, "").replace(/\[[^\]]*\]/g, "").split(/\s+/).filter(Boolean);
  const argv: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === "...") continue;
    if (w.startsWith("--")) {
      const name = w.slice(2);
      argv.push(w);
      if (flags.find((f) => f.name === name)?.takesValue) {
        argv.push(valueFor(text, name));
        i++;
      }
    } else argv.push(w === "HOST" ? "cursor" : "x"); // an operand: any word, a host from the list
  }
  return argv;
}

function usageErrorOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ServerfsError);
    expect((err as ServerfsError).code).toBe("USAGE_ERROR");
    return (err as ServerfsError).message;
  }
}

describe.each(LEAVES.map((l) => [l.path, l] as const))("serverfs %s", (path, spec) => {
  const text = commandHelp(spec);
  const flags = helpFlags(text);
  const minimal = minimalArgv(text, path, flags);
  const withFlag = (f: HelpFlag) => [...minimal, `--${f.name}`, ...(f.takesValue ? [valueFor(text, f.name)] : [])];

  test("help lists every flag the table holds, and the parser takes the first usage line as written", () => {
    expect(flags.map((f) => f.name).sort()).toEqual(Object.keys(spec.flags).sort());
    expect(usageErrorOf(() => parseArgs(minimal, spec))).toBeNull();
  });

  test("every flag help lists parses; an alternative from another usage line is refused", () => {
    const firstLine = usageLinesOf(text)[0]!;
    for (const f of flags.filter((f) => !minimal.includes(`--${f.name}`))) {
      const error = usageErrorOf(() => parseArgs(withFlag(f), spec));
      const otherLine = f.status === "alternative" && !firstLine.includes(`--${f.name} `) && !firstLine.endsWith(`--${f.name}`);
      if (otherLine) expect(error).not.toBeNull();
      else expect(error).toBeNull();
    }
  });

  test("every flag help does not list is an unknown flag", () => {
    for (const name of ALL_FLAG_NAMES.filter((n) => !flags.some((f) => f.name === n))) {
      expect(usageErrorOf(() => parseArgs([...minimal, `--${name}`, "v"], spec))).toStartWith(`unknown flag '--${name}'`);
    }
  });

  test("a required flag is bare in every usage line and refused when missing; an optional one is bracketed", () => {
    const lines = usageLinesOf(text);
    expect(lines.length).toBeGreaterThan(0);
    for (const f of flags) {
      const words = `--${f.name}${f.takesValue ? " " : ""}`;
      for (const line of lines) {
        if (f.status === "required") {
          expect(line).toContain(` ${words}`);
          expect(line).not.toContain(`[${words}`);
        }
        if (f.status === "optional") expect(line).toContain(`[${words}`);
      }
      if (f.status !== "required") continue;
      const without = minimal.filter((w, i) => w !== `--${f.name}` && !(f.takesValue && minimal[i - 1] === `--${f.name}`));
      expect(usageErrorOf(() => parseArgs(without, spec))).toContain(`--${f.name}`);
    }
  });
});

describe("help through the real CLI prints the rendered table", () => {
  test.each(LEAVES.filter((l) => l.path.includes(" ")).map((l) => [l.path, l] as const))("help %s and --help", (path, spec) => {
    const viaHelp = runCli(["help", ...path.split(" ")]);
    expect([viaHelp.code, viaHelp.stderr, viaHelp.stdout]).toEqual([0, "", `${commandHelp(spec)}\n`]);
    const viaFlag = runCli([...path.split(" "), "--help"]);
    expect([viaFlag.code, viaFlag.stdout]).toEqual([0, `${commandHelp(spec)}\n`]);
  });
});
