// The strict command-line parser shared by every command, driven by the same table help is
// rendered from (src/commands/specs.ts, src/commands/help.ts). Unknown flags, missing values,
// repeated single-value flags, values outside an enum or a range, missing required flags and
// operands are usage errors (exit 2), never silently ignored.
import { expandHome, HomeUnavailableError } from "../config/home-path.ts";
import { ServerfsError } from "../errors.ts";
import { didYouMean } from "../common/did-you-mean.ts";

export interface FlagSpec {
  /** Takes a value (`--config FILE`); otherwise a boolean switch. */
  value?: boolean;
  /** What help shows for the value: FILE, N, DIR. */
  arg?: string;
  /** One line for help. */
  help: string;
  /** Must be given (help shows it without brackets). */
  required?: boolean;
  /** May be given more than once (values are collected in order). */
  repeat?: boolean;
  /**
   * The value is a file path: a leading `~` or `~/` is expanded to the home directory, because an
   * MCP host starts serverfs without a shell that would have done it (src/config/home-path.ts).
   */
  path?: boolean;
  /**
   * Takes every following argument up to the next one that starts with `--`: zero or more values,
   * and more occurrences add to them. This is the shape an MCP Bundle host gives a list the user
   * picked (`--workdir-ro ${user_config.folders}` becomes `--workdir-ro /a /b`, or nothing but
   * `--workdir-ro` for an empty list).
   */
  variadic?: boolean;
  /** With `variadic`: zero values or one (an MCP Bundle's optional file), never two. */
  atMostOne?: boolean;
  /** The only values accepted. */
  values?: readonly string[];
  /** A whole number in this inclusive range. */
  range?: { min: number; max: number };
}

export interface OperandSpec {
  /** What the synopsis shows: ID, HOST. */
  name: string;
  /** What a missing one is called: "a task id". */
  help: string;
  optional?: boolean;
  /** Takes every remaining operand (one or more; zero when optional). */
  repeat?: boolean;
  /** The only values accepted, and the word for one in an error ("host"). */
  values?: readonly string[];
  kind?: string;
}

/** Exactly one of these groups of flags is given; a group counts as given when any of its flags has a value. */
export interface AlternativeFlags {
  groups: ReadonlyArray<readonly string[]>;
  /** Said when none is given. */
  missing: string;
  /** Said when two are. */
  both: string;
  /** Shown after a usage line whose group has several flags ("at least one"). */
  groupNote?: string;
}

export interface CommandSpec {
  /** The words after `serverfs`: "serve", "tasks list". */
  path: string;
  summary: string;
  operands?: readonly OperandSpec[];
  flags: Readonly<Record<string, FlagSpec>>;
  oneOf?: AlternativeFlags;
  /** Paragraphs help prints after the usage lines. */
  description?: string;
  /** A command whose first argument picks one of these (`tasks list`, `service install`). */
  subcommands?: Readonly<Record<string, CommandSpec>>;
}

export interface ParsedArgs {
  flags: Map<string, string[]>;
  switches: Set<string>;
  positionals: string[];
}

export interface ParsedCommandLine {
  /** The command or subcommand that was parsed (a leaf of the table). */
  spec: CommandSpec;
  /** The subcommand word, when the command has subcommands. */
  subcommand: string | undefined;
  args: ParsedArgs;
}

/** Pick the subcommand (when the command has them), then parse and check its flags and operands. */
export function parseCommandLine(argv: readonly string[], spec: CommandSpec): ParsedCommandLine {
  if (!spec.subcommands) return { spec, subcommand: undefined, args: parseArgs(argv, spec) };
  const [word, ...rest] = argv;
  const names = Object.keys(spec.subcommands);
  if (word === undefined || word.startsWith("-")) {
    throw usage(`${spec.path} needs a subcommand${word === undefined ? "" : " before its flags"}: ${names.join(", ")}`);
  }
  const sub = Object.hasOwn(spec.subcommands, word) ? spec.subcommands[word] : undefined;
  if (!sub) {
    throw usage(`unknown ${spec.path} subcommand '${word}'${didYouMean(word, names) || ` (one of ${names.join(", ")})`}`);
  }
  return { spec: sub, subcommand: word, args: parseArgs(rest, sub) };
}

export function parseArgs(argv: readonly string[], spec: CommandSpec): ParsedArgs {
  const defs = spec.flags;
  const flags = new Map<string, string[]>();
  const switches = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "-") {
      if (arg.startsWith("-") && arg !== "-") throw unknownFlag(arg, spec);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    // Own names only: `--constructor` or `--toString` must not find Object.prototype's members.
    const def = Object.hasOwn(defs, name) ? defs[name] : undefined;
    if (!def) throw unknownFlag(`--${name}`, spec);
    if (!def.value) {
      if (eq !== -1) throw usage(`flag '--${name}' takes no value`);
      switches.add(name);
      continue;
    }
    if (def.variadic) {
      const list = flags.get(name) ?? [];
      const add = (value: string) => list.push(checkedValue(name, def, value));
      if (eq !== -1) add(arg.slice(eq + 1));
      else while (i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) add(argv[++i]!);
      flags.set(name, list);
      continue;
    }
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw usage(`flag '--${name}' needs a value${def.arg ? ` (${def.arg})` : ""}`);
      value = next;
      i++;
    }
    const list = flags.get(name) ?? [];
    if (list.length > 0 && !def.repeat) throw usage(`flag '--${name}' given more than once`);
    list.push(checkedValue(name, def, value));
    flags.set(name, list);
  }
  for (const [name, def] of Object.entries(defs)) {
    if (def.atMostOne && (flags.get(name)?.length ?? 0) > 1) throw usage(`give one --${name}${def.arg ? ` ${def.arg}` : ""}`);
  }
  const parsed = { flags, switches, positionals };
  checkOperands(positionals, spec);
  checkRequired(parsed, spec);
  return parsed;
}

/** Whether a flag was given: a switch, or a flag with at least one value. */
export function given(args: ParsedArgs, name: string): boolean {
  return args.switches.has(name) || (args.flags.get(name)?.length ?? 0) > 0;
}

function checkRequired(args: ParsedArgs, spec: CommandSpec): void {
  const where = spec.path.includes(" ") ? ` for '${spec.path}'` : "";
  for (const [name, def] of Object.entries(spec.flags)) {
    if (def.required && !given(args, name)) throw usage(`--${name}${def.arg ? ` ${def.arg}` : ""} is required${where}`);
  }
  if (spec.oneOf) {
    const present = spec.oneOf.groups.filter((group) => group.some((name) => given(args, name)));
    if (present.length === 0) throw usage(spec.oneOf.missing);
    if (present.length > 1) throw usage(spec.oneOf.both);
  }
}

function checkOperands(positionals: readonly string[], spec: CommandSpec): void {
  const operands = spec.operands ?? [];
  const last = operands[operands.length - 1];
  const max = last?.repeat ? Infinity : operands.length;
  if (positionals.length > max) {
    throw usage(`unexpected argument '${positionals[operands.length]}' (run 'serverfs help ${spec.path}')`);
  }
  operands.forEach((operand, i) => {
    const value = positionals[i];
    if (value === undefined) {
      if (!operand.optional) throw usage(`${spec.path} needs ${operand.help}${operand.values ? `: ${operand.values.join(", ")}` : ""}`);
      return;
    }
    const values = operand.values;
    if (!values) return;
    for (const v of operand.repeat ? positionals.slice(i) : [value]) {
      if (!values.includes(v)) {
        throw usage(`unknown ${operand.kind ?? operand.name} '${v}'${didYouMean(v, values) || ` (one of ${values.join(", ")})`}`);
      }
    }
  });
}

function checkedValue(name: string, def: FlagSpec, value: string): string {
  if (def.values && !def.values.includes(value)) {
    throw usage(`--${name} '${value}' is not one of ${def.values.join(", ")}${didYouMean(value, def.values)}`);
  }
  if (def.range) {
    const { min, max } = def.range;
    const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
    if (!(n >= min && n <= max)) throw usage(`--${name} must be ${rangeWords(def.range)}, got '${value}'`);
  }
  return def.path ? expandPathValue(name, value) : value;
}

/** "a whole number from 1 to 500", "a whole number, 0 or more" (help says it the same way). */
export function rangeWords(range: { min: number; max: number }): string {
  return range.max === Infinity ? `a whole number, ${range.min} or more` : `a whole number from ${range.min} to ${range.max}`;
}

function unknownFlag(typed: string, spec: CommandSpec): ServerfsError {
  const names = Object.keys(spec.flags);
  const bare = typed.replace(/^-+/, "");
  const hint = typed.startsWith("--") || bare.length > 1 ? didYouMean(bare, names, (n) => `--${n}`) : "";
  return usage(`unknown flag '${typed}'${hint || ` (run 'serverfs help ${spec.path}' for its flags)`}`);
}

function expandPathValue(name: string, value: string): string {
  try {
    return expandHome(value);
  } catch (err) {
    if (err instanceof HomeUnavailableError) throw usage(`--${name}: ${err.message}`);
    throw err;
  }
}

export function flag(args: ParsedArgs, name: string): string | undefined {
  return args.flags.get(name)?.[0];
}

export function usage(message: string): ServerfsError {
  return new ServerfsError("USAGE_ERROR", message);
}
