// A small strict flag parser shared by every command. Unknown flags, missing values and
// repeated single-value flags are usage errors (exit 2), never silently ignored.
import { expandHome, HomeUnavailableError } from "../config/home-path.ts";
import { ServerfsError } from "../errors.ts";

export interface FlagSpec {
  /** Takes a value (`--config FILE`); otherwise a boolean switch. */
  value?: boolean;
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
}

export interface ParsedArgs {
  flags: Map<string, string[]>;
  switches: Set<string>;
  positionals: string[];
}

export function parseArgs(argv: readonly string[], spec: Record<string, FlagSpec>): ParsedArgs {
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
      if (arg.startsWith("-") && arg !== "-") throw usage(`unknown flag '${arg}'`);
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    // Own names only: `--constructor` or `--toString` must not find Object.prototype's members.
    const def = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (!def) throw usage(`unknown flag '--${name}'`);
    if (!def.value) {
      if (eq !== -1) throw usage(`flag '--${name}' takes no value`);
      switches.add(name);
      continue;
    }
    if (def.variadic) {
      const list = flags.get(name) ?? [];
      const add = (value: string) => list.push(def.path ? expandPathValue(name, value) : value);
      if (eq !== -1) add(arg.slice(eq + 1));
      else while (i + 1 < argv.length && !argv[i + 1]!.startsWith("--")) add(argv[++i]!);
      flags.set(name, list);
      continue;
    }
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw usage(`flag '--${name}' needs a value`);
      value = next;
      i++;
    }
    const list = flags.get(name) ?? [];
    if (list.length > 0 && !def.repeat) throw usage(`flag '--${name}' given more than once`);
    list.push(def.path ? expandPathValue(name, value) : value);
    flags.set(name, list);
  }
  return { flags, switches, positionals };
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
