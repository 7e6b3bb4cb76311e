// Help text, rendered from the command-line table the parser reads (src/commands/specs.ts), so
// it shows every flag a command accepts and no other, with the required ones out of brackets.
import { rangeWords, type CommandSpec, type FlagSpec } from "./args.ts";

/** `--config FILE`, `--json`, `--workdir ALIAS=PATH[:MODE] ...` */
function flagWords(name: string, def: FlagSpec): string {
  const words = def.value ? `--${name} ${def.arg ?? "VALUE"}` : `--${name}`;
  return def.repeat || (def.variadic && !def.atMostOne) ? `${words} ...` : words;
}

function operandWords(spec: CommandSpec): string[] {
  return (spec.operands ?? []).map((o) => {
    const words = o.repeat ? `${o.name} ...` : o.name;
    return o.optional ? `[${words}]` : words;
  });
}

/**
 * One synopsis per alternative (`render-config --config FILE` / `render-config --env-file FILE`):
 * the alternative's flags, required when it is a single flag; then the command's other flags.
 */
export function usageLines(spec: CommandSpec): string[] {
  const groups = spec.oneOf?.groups ?? [[]];
  const grouped = new Set(groups.flat());
  const rest = Object.entries(spec.flags).filter(([name]) => !grouped.has(name));
  return groups.map((group) => {
    const words = [`serverfs ${spec.path}`, ...operandWords(spec)];
    for (const name of group) {
      const w = flagWords(name, spec.flags[name]!);
      words.push(group.length === 1 ? w : `[${w}]`);
    }
    for (const [name, def] of rest) words.push(def.required ? flagWords(name, def) : `[${flagWords(name, def)}]`);
    const note = group.length > 1 && spec.oneOf?.groupNote ? `  (${spec.oneOf.groupNote})` : "";
    return words.join(" ") + note;
  });
}

function flagHelp(def: FlagSpec): string {
  const parts = [def.help];
  if (def.values) parts.push(`one of ${def.values.join(", ")}`);
  if (def.range) parts.push(rangeWords(def.range));
  return parts.join("; ");
}

function flagTable(spec: CommandSpec): string[] {
  const entries = Object.entries(spec.flags);
  if (entries.length === 0) return [];
  const grouped = new Set((spec.oneOf?.groups ?? []).flat());
  const rows = entries.map(([name, def]) => {
    const status = def.required ? "required" : grouped.has(name) ? "alternative" : "optional";
    return [flagWords(name, def), status, flagHelp(def)] as const;
  });
  const width = Math.max(...rows.map((r) => r[0].length));
  const lines = ["flags:", ...rows.map(([w, status, help]) => `  ${w.padEnd(width)}  (${status}) ${help}`)];
  if (spec.oneOf) lines.push("An (alternative) flag belongs to one usage line above: give exactly one line's alternative.");
  return lines;
}

function synopsis(lines: string[]): string[] {
  return lines.map((line, i) => `${i === 0 ? "usage: " : "       "}${line}`);
}

/** The help of a command, or of one subcommand (`help tasks list`). */
export function commandHelp(spec: CommandSpec): string {
  const out: string[] = [];
  if (spec.subcommands) {
    const subs = Object.entries(spec.subcommands);
    out.push(...synopsis(subs.flatMap(([, sub]) => usageLines(sub))), "", `${spec.summary}.`);
    if (spec.description) out.push("", spec.description);
    const width = Math.max(...subs.map(([name]) => name.length));
    out.push("", "subcommands:", ...subs.map(([name, sub]) => `  ${name.padEnd(width)}  ${sub.summary}`));
    out.push("", `Run 'serverfs help ${spec.path} SUBCOMMAND' for a subcommand's flags.`);
    return out.join("\n");
  }
  out.push(...synopsis(usageLines(spec)), "", `${spec.summary}.`);
  if (spec.description) out.push("", spec.description);
  const table = flagTable(spec);
  if (table.length > 0) out.push("", ...table);
  return out.join("\n");
}
