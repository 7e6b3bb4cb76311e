// Put one `[mcp_servers.<name>]` table into a TOML configuration text (Codex's config.toml) by
// editing the text: a new table is appended; with --force the old table's lines (and those of
// its sub-tables, such as `[mcp_servers.<name>.env]`) are replaced. Every other byte stays.
// The result is parsed again (smol-toml) and must hold exactly the old document plus the entry;
// otherwise nothing is written.
import { parse, TomlError } from "smol-toml";
import { ServerfsError } from "../errors.ts";

export interface TomlEntryEdit {
  /** The table holding the servers (`mcp_servers`). */
  table: string;
  name: string;
  entry: { command: string; args: string[] };
  force: boolean;
  label: string;
}

export interface EditResult {
  text: string;
  replaced: boolean;
}

const BOM = "\uFEFF";

export function editTomlConfig(original: string | null, edit: TomlEntryEdit): EditResult {
  const bom = original?.startsWith(BOM) ? BOM : "";
  const body = original === null ? "" : original.slice(bom.length);
  const eol = body.includes("\r\n") ? "\r\n" : "\n";
  const before = parseChecked(body, edit);
  const servers = before[edit.table];
  if (servers !== undefined && !isTable(servers)) throw invalid(edit, `"${edit.table}" is not a table`);
  const exists = servers !== undefined && Object.hasOwn(servers, edit.name);
  const table = tableText(edit, eol);
  let text: string;
  if (!exists) {
    text = body + separator(body, eol) + table;
    const after = parseAfter(text, edit, "its [" + edit.table + "] is written in a form a table cannot be added to (an inline table?)");
    expectSameExceptEntry(before, after, edit);
  } else {
    if (!edit.force) {
      throw new ServerfsError("HOST_ENTRY_EXISTS", `${edit.label}: already has a [${edit.table}.${edit.name}] server; pass --force to replace it`);
    }
    const spans = tomlSections(body)
      .filter((s) => s.path.length >= 2 && s.path[0] === edit.table && s.path[1] === edit.name)
      .map((s) => ({ ...s, end: sectionContentEnd(body, s) }));
    const notEditable = `the existing entry is not written as [${edit.table}.${edit.name}] tables (dotted keys or an inline table?); replace it by hand`;
    if (spans.length === 0 || spans.some((s) => s.array)) throw uneditable(edit, notEditable);
    let removed = body;
    for (const s of [...spans].reverse()) removed = removed.slice(0, s.start) + removed.slice(s.end);
    const without = parseAfter(removed, edit, notEditable);
    if (isTable(without[edit.table]) && Object.hasOwn(without[edit.table] as object, edit.name)) throw uneditable(edit, notEditable);
    const first = spans[0]!;
    text = body.slice(0, first.start) + table;
    let at = first.end;
    for (const s of spans.slice(1)) {
      text += body.slice(at, s.start);
      at = s.end;
    }
    text += body.slice(at);
    const after = parseAfter(text, edit, notEditable);
    expectSameExceptEntry(before, after, edit);
  }
  return { text: `${bom}${text}`, replaced: exists };
}

export type TomlTable = Record<string, unknown>;

function invalid(edit: TomlEntryEdit, reason: string): ServerfsError {
  return new ServerfsError("HOST_CONFIG_INVALID", `${edit.label}: ${reason}; nothing was written`);
}

function uneditable(edit: TomlEntryEdit, reason: string): ServerfsError {
  return new ServerfsError("HOST_CONFIG_UNEDITABLE", `${edit.label}: ${reason}; nothing was written`);
}

function isTable(value: unknown): value is TomlTable {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function parseChecked(body: string, edit: TomlEntryEdit): TomlTable {
  try {
    return parse(body) as TomlTable;
  } catch (err) {
    if (err instanceof TomlError) {
      const what = err.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      throw invalid(edit, `not valid TOML (line ${err.line}, column ${err.column}: ${what})`);
    }
    throw invalid(edit, "not valid TOML");
  }
}

function parseAfter(text: string, edit: TomlEntryEdit, reason: string): TomlTable {
  try {
    return parse(text) as TomlTable;
  } catch {
    throw uneditable(edit, reason);
  }
}

/** The old document with the entry set must be exactly the new one; otherwise HOST_CONFIG_UNEDITABLE. */
export function expectSameExceptEntry(before: TomlTable, after: TomlTable, edit: TomlEntryEdit): void {
  const why = "serverfs could not add the entry without changing the rest of the file; add it by hand (serverfs connect codex prints it)";
  const afterServers = after[edit.table];
  if (!isTable(afterServers) || !Bun.deepEquals(afterServers[edit.name], edit.entry, true)) throw uneditable(edit, why);
  const { [edit.name]: _new, ...afterRest } = afterServers;
  const beforeServers = isTable(before[edit.table]) ? (before[edit.table] as TomlTable) : undefined;
  const { [edit.name]: _old, ...beforeRest } = beforeServers ?? {};
  const { [edit.table]: _a, ...afterOthers } = after;
  const { [edit.table]: _b, ...beforeOthers } = before;
  if (!Bun.deepEquals(afterOthers, beforeOthers, true) || !Bun.deepEquals(afterRest, beforeRest, true)) throw uneditable(edit, why);
}

/** What goes between the old text and an appended table: a blank line, ending the last line first. */
function separator(body: string, eol: string): string {
  if (body === "") return "";
  if (!body.endsWith("\n")) return eol + eol;
  if (/(?:\r?\n){2}$/.test(body) || body.trim() === "") return "";
  return eol;
}

/** A TOML basic string. JSON's escapes are TOML's; DEL, which JSON leaves raw, is escaped too. */
function tomlString(text: string): string {
  return JSON.stringify(text).replace(/\u007f/g, "\\u007F");
}

function bareOrQuotedKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

function tableText(edit: TomlEntryEdit, eol: string): string {
  const header = `[${bareOrQuotedKey(edit.table)}.${bareOrQuotedKey(edit.name)}]`;
  const args = `[${edit.entry.args.map(tomlString).join(", ")}]`;
  return [header, `command = ${tomlString(edit.entry.command)}`, `args = ${args}`, ""].join(eol);
}

export interface TomlSection {
  /** Offset of the start of the header's line. */
  start: number;
  /** The header's key path, unquoted. */
  path: string[];
  /** `[[...]]` */
  array: boolean;
  /** Offset just past the last character of the section's content that is not whitespace or a comment. */
  lastContent: number;
  /** Offset where the next section's line starts (or the end of the text). */
  next: number;
}

/**
 * Every table header of a valid TOML text, with the extent of its section. A `[` opens a header
 * only as the first character of a line outside any string, array or inline table; strings
 * (basic, literal, and both multi-line forms) and comments are skipped so their contents never
 * count.
 */
export function tomlSections(text: string): TomlSection[] {
  const sections: TomlSection[] = [];
  let depth = 0;
  let lineHasContent = false;
  let current: TomlSection | null = null;
  let i = 0;
  const touch = (end: number) => {
    if (current !== null) current.lastContent = end;
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === "\n") {
      lineHasContent = false;
      i++;
      continue;
    }
    if (ch === " " || ch === "\t" || ch === "\r") {
      i++;
      continue;
    }
    if (ch === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (ch === "[" && depth === 0 && !lineHasContent) {
      const lineStartAt = text.lastIndexOf("\n", i - 1) + 1;
      if (current !== null) current.next = lineStartAt;
      const header = readHeader(text, i);
      current = { start: lineStartAt, path: header.path, array: header.array, lastContent: header.end, next: text.length };
      sections.push(current);
      lineHasContent = true;
      i = header.end;
      continue;
    }
    lineHasContent = true;
    if (ch === '"' || ch === "'") {
      i = skipString(text, i);
      touch(i);
      continue;
    }
    if (ch === "[" || ch === "{") depth++;
    else if (ch === "]" || ch === "}") depth--;
    i++;
    touch(i);
  }
  return sections;
}

/** Offset just past the string starting at `i` (any of the four forms). */
function skipString(text: string, i: number): number {
  const q = text[i]!;
  const triple = text.startsWith(q.repeat(3), i);
  if (triple) {
    let j = i + 3;
    while (j < text.length) {
      if (q === '"' && text[j] === "\\") {
        j += 2;
        continue;
      }
      if (text.startsWith(q.repeat(3), j)) {
        // Up to two more quotes may close the string (`""""` ends with a quote inside it).
        let end = j + 3;
        while (end < text.length && text[end] === q && end < j + 5) end++;
        return end;
      }
      j++;
    }
    return text.length;
  }
  let j = i + 1;
  while (j < text.length && text[j] !== q && text[j] !== "\n") {
    if (q === '"' && text[j] === "\\") j++;
    j++;
  }
  return j + 1;
}

/** The key path of the header at `i` (`[a."b c".d]` -> a, b c, d) and the offset past its `]`. */
function readHeader(text: string, i: number): { path: string[]; array: boolean; end: number } {
  const array = text.startsWith("[[", i);
  let j = i + (array ? 2 : 1);
  const path: string[] = [];
  for (;;) {
    while (text[j] === " " || text[j] === "\t") j++;
    const ch = text[j];
    if (ch === '"' || ch === "'") {
      const end = skipString(text, j);
      const raw = text.slice(j, end);
      path.push(ch === '"' ? (JSON.parse(basicToJson(raw)) as string) : raw.slice(1, -1));
      j = end;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(text.slice(j));
      path.push(m ? m[0] : "");
      j += m ? m[0].length : 0;
    }
    while (text[j] === " " || text[j] === "\t") j++;
    if (text[j] === ".") {
      j++;
      continue;
    }
    break;
  }
  j += array ? 2 : 1;
  return { path, array, end: j };
}

/** A TOML basic string as JSON text: the escapes JSON lacks (`\e`, `\xHH`, `\UHHHHHHHH`) spelled as JSON ones. */
function basicToJson(raw: string): string {
  return raw.replace(/\\(e|x[0-9A-Fa-f]{2}|U[0-9A-Fa-f]{8}|.)/g, (m, esc: string) => {
    if (esc === "e") return "\\u001b";
    if (esc[0] === "x") return `\\u00${esc.slice(1)}`;
    if (esc[0] === "U") {
      const cp = Number.parseInt(esc.slice(1), 16);
      return JSON.stringify(String.fromCodePoint(cp)).slice(1, -1);
    }
    return m;
  });
}

/**
 * Where a section's own text ends: after the line holding its last content, so the blank lines
 * and comments that precede the next header (which usually describe that next table) stay.
 */
function sectionContentEnd(text: string, s: TomlSection): number {
  const eolAt = text.indexOf("\n", s.lastContent);
  const lineEnd = eolAt === -1 || eolAt >= s.next ? s.next : eolAt + 1;
  return Math.min(lineEnd, s.next);
}
