// Put one server entry into a host's JSON (or JSON-with-comments) configuration text by editing
// the text, never by parsing and re-serializing it: the only bytes that change are an inserted
// comma, the inserted entry, and (with --force) the old entry's value. Every other byte, comment
// and key order survives as it was.
//
// jsonc-parser (Microsoft's, the one VS Code uses) lexes and parses the text with offsets:
// strings, escapes, `//` and `/* */` comments, trailing commas. The edits are computed here.
// After editing, the result is parsed again and must hold exactly the old document plus the
// entry, with every old comment still there; otherwise nothing is written.
import { createScanner, getNodeValue, type Node, type ParseError, parseTree, printParseErrorCode, type SyntaxKind } from "jsonc-parser";
import { ServerfsError } from "../errors.ts";
import type { JsonSyntax } from "./connect-hosts.ts";

export interface JsonEntryEdit {
  /** The top-level key holding the servers (`mcpServers`, VS Code's `servers`). */
  key: string;
  /** The server's name under it. */
  name: string;
  entry: Record<string, unknown>;
  syntax: JsonSyntax;
  /** Replace an existing entry of that name. */
  force: boolean;
  /** How messages name the file. */
  label: string;
}

export interface EditResult {
  text: string;
  replaced: boolean;
}

const BOM = "\uFEFF";

// The scanner's token kinds used here. jsonc-parser declares SyntaxKind a const enum, which this
// project's isolated module compile cannot inline; the values are part of its published API.
const COMMA_TOKEN = 5 as SyntaxKind;
const LINE_COMMENT = 12 as SyntaxKind;
const BLOCK_COMMENT = 13 as SyntaxKind;
const EOF_TOKEN = 17 as SyntaxKind;

/** The new file text for `original` (null: the file does not exist yet). */
export function editJsonConfig(original: string | null, edit: JsonEntryEdit): EditResult {
  const bom = original?.startsWith(BOM) ? BOM : "";
  const body = original === null ? "" : original.slice(bom.length);
  const eol = body.includes("\r\n") ? "\r\n" : "\n";
  if (body.trim() === "") {
    // Nothing to keep (a missing, empty or whitespace-only file): a fresh document.
    const doc = JSON.stringify({ [edit.key]: { [edit.name]: edit.entry } }, null, 2).split("\n").join(eol);
    return { text: `${bom}${doc}${eol}`, replaced: false };
  }
  const root = parseChecked(body, edit);
  if (root.type !== "object") throw invalid(edit, "the top level is not a JSON object");
  const holder = single(root, edit.key, edit);
  const unit = indentUnit(body, root);
  const edits: TextEdit[] = [];
  let replacedSpan: Span | null = null;
  if (holder === undefined) {
    edits.push(...insertProperty(body, root, edit.key, { [edit.name]: edit.entry }, unit, eol));
  } else {
    const servers = holder.children![1]!;
    if (servers.type !== "object") throw invalid(edit, `"${edit.key}" is not an object`);
    const existing = single(servers, edit.name, edit);
    if (existing === undefined) {
      edits.push(...insertProperty(body, servers, edit.name, edit.entry, unit, eol));
    } else {
      if (!edit.force) {
        throw new ServerfsError("HOST_ENTRY_EXISTS", `${edit.label}: already has a "${edit.name}" server under "${edit.key}"; pass --force to replace it`);
      }
      const value = existing.children![1]!;
      replacedSpan = { start: value.offset, end: value.offset + value.length };
      edits.push(replaceValue(body, servers, existing, value, edit.entry, unit, eol));
    }
  }
  const text = applyEdits(body, edits);
  verifyJsonEdit(body, text, edit, replacedSpan);
  return { text: `${bom}${text}`, replaced: replacedSpan !== null };
}

interface TextEdit {
  offset: number;
  /** Bytes of the original removed at `offset` (0 for an insertion). */
  length: number;
  content: string;
}

export interface Span {
  start: number;
  end: number;
}

function invalid(edit: JsonEntryEdit, reason: string): ServerfsError {
  return new ServerfsError("HOST_CONFIG_INVALID", `${edit.label}: ${reason}; nothing was written`);
}

function uneditable(edit: JsonEntryEdit, reason: string): ServerfsError {
  return new ServerfsError("HOST_CONFIG_UNEDITABLE", `${edit.label}: ${reason}; nothing was written`);
}

function parseOptions(syntax: JsonSyntax) {
  return { allowTrailingComma: syntax.trailingCommas, disallowComments: !syntax.comments, allowEmptyContent: false };
}

const WHY: Partial<Record<string, string>> = {
  InvalidCommentToken: "a comment, which this host's parser does not accept",
  PropertyNameExpected: "a property name was expected (a trailing comma?)",
  ValueExpected: "a value was expected (a trailing comma?)",
  CommaExpected: "a comma was expected",
  ColonExpected: "a colon was expected",
  CloseBraceExpected: "a closing brace was expected",
  CloseBracketExpected: "a closing bracket was expected",
  EndOfFileExpected: "text after the end of the document",
  UnexpectedEndOfString: "a string is not closed",
  UnexpectedEndOfComment: "a comment is not closed",
  InvalidEscapeCharacter: "an invalid escape in a string",
  InvalidCharacter: "a character that is not allowed there",
  InvalidSymbol: "a symbol that is not JSON",
  InvalidNumberFormat: "an invalid number",
  InvalidUnicode: "an invalid \\u escape",
};

function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return `line ${line}, column ${column}`;
}

function parseChecked(body: string, edit: JsonEntryEdit): Node {
  const errors: ParseError[] = [];
  const root = parseTree(body, errors, parseOptions(edit.syntax));
  const first = errors[0];
  if (first !== undefined) {
    const code = printParseErrorCode(first.error);
    throw invalid(edit, `not valid ${edit.syntax.comments ? "JSON with comments" : "JSON"} (${position(body, first.offset)}: ${WHY[code] ?? code})`);
  }
  if (root === undefined) throw invalid(edit, "holds no JSON document");
  if (!edit.syntax.comments) {
    // The host reads it with a strict JSON parser: hold the file to the same one.
    try {
      JSON.parse(body);
    } catch {
      throw invalid(edit, "not valid JSON");
    }
  }
  return root;
}

/** The one property named `name` in object `obj`, undefined if none; two are refused. */
function single(obj: Node, name: string, edit: JsonEntryEdit): Node | undefined {
  const found = (obj.children ?? []).filter((p) => p.children?.[0]?.value === name);
  if (found.length > 1) throw invalid(edit, `"${name}" appears more than once in the same object, so which one the host uses is unclear`);
  return found[0];
}

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

function lineNumber(text: string, offset: number): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** The whitespace a line starts with. */
function lineIndent(text: string, offset: number): string {
  const start = lineStart(text, offset);
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** Whether only spaces and tabs stand between the start of its line and `offset`. */
function startsLine(text: string, offset: number): boolean {
  return /^[ \t]*$/.test(text.slice(lineStart(text, offset), offset));
}

/** The file's indentation step: that of the first top-level key that starts a line, else two spaces. */
function indentUnit(text: string, root: Node): string {
  for (const p of root.children ?? []) {
    if (!startsLine(text, p.offset)) continue;
    const indent = lineIndent(text, p.offset);
    if (indent !== "" && (/^\t+$/.test(indent) || /^ +$/.test(indent))) return indent;
  }
  return "  ";
}

/** The indentation of `obj`'s members: as its existing members have it, else one step in. */
function memberIndent(text: string, obj: Node, unit: string): string {
  const lined = (obj.children ?? []).filter((p) => startsLine(text, p.offset));
  const last = lined[lined.length - 1];
  if (last !== undefined) return lineIndent(text, last.offset);
  return lineIndent(text, obj.offset) + unit;
}

/** `"name": value`, pretty-printed with the file's step and line ending, continuation lines at `indent`. */
function prettyProperty(name: string, value: unknown, indent: string, unit: string, eol: string): string {
  return `${JSON.stringify(name)}: ${JSON.stringify(value, null, unit).split("\n").join(eol + indent)}`;
}

/** `"name":value` on one line, with a space after the colon if the object's last member has one. */
function compactProperty(name: string, value: unknown, spaced: boolean): string {
  return `${JSON.stringify(name)}:${spaced ? " " : ""}${JSON.stringify(value)}`;
}

/** The comma after `offset` before `limit` (trivia and comments skipped), as the offset just past it. */
function commaAfter(text: string, offset: number, limit: number): number | null {
  const scanner = createScanner(text, false);
  scanner.setPosition(offset);
  for (let kind = scanner.scan(); kind !== EOF_TOKEN && scanner.getTokenOffset() < limit; kind = scanner.scan()) {
    if (kind === COMMA_TOKEN) return scanner.getTokenOffset() + 1;
  }
  return null;
}

/** Edits that add `"name": value` as the last member of object `obj`. */
function insertProperty(text: string, obj: Node, name: string, value: unknown, unit: string, eol: string): TextEdit[] {
  const open = obj.offset;
  const close = obj.offset + obj.length - 1;
  const members = obj.children ?? [];
  const indent = memberIndent(text, obj, unit);
  const pretty = prettyProperty(name, value, indent, unit, eol);
  const closeOwnLine = startsLine(text, close);
  const last = members[members.length - 1];
  if (last === undefined) {
    if (closeOwnLine && lineNumber(text, close) > lineNumber(text, open)) {
      return [{ offset: lineStart(text, close), length: 0, content: `${indent}${pretty}${eol}` }];
    }
    if (lineNumber(text, close) > lineNumber(text, open)) return [{ offset: open + 1, length: 0, content: `${eol}${indent}${pretty}` }];
    // `{}` on one line: opened up, so the entry reads as the file's other entries do.
    return [{ offset: close, length: 0, content: `${eol}${indent}${pretty}${eol}${lineIndent(text, open)}` }];
  }
  const lastEnd = last.offset + last.length;
  const comma = commaAfter(text, lastEnd, close);
  const edits: TextEdit[] = [];
  const anchor = comma ?? lastEnd;
  const needComma = comma === null ? "," : "";
  if (closeOwnLine && lineNumber(text, close) > lineNumber(text, lastEnd)) {
    if (needComma !== "") edits.push({ offset: lastEnd, length: 0, content: needComma });
    edits.push({ offset: lineStart(text, close), length: 0, content: `${indent}${pretty}${eol}` });
  } else if (lineNumber(text, close) > lineNumber(text, open)) {
    edits.push({ offset: anchor, length: 0, content: `${needComma}${eol}${indent}${pretty}` });
  } else {
    // A one-line object keeps to one line.
    const spaced = last.colonOffset !== undefined && text[last.colonOffset + 1] === " ";
    edits.push({ offset: anchor, length: 0, content: `${needComma}${spaced ? " " : ""}${compactProperty(name, value, spaced)}` });
  }
  return edits;
}

/** The edit that replaces an existing property's value, in the layout its object uses. */
function replaceValue(text: string, obj: Node, prop: Node, value: Node, entry: unknown, unit: string, eol: string): TextEdit {
  const objOneLine = lineNumber(text, obj.offset) === lineNumber(text, obj.offset + obj.length - 1);
  const content = objOneLine
    ? JSON.stringify(entry)
    : JSON.stringify(entry, null, unit).split("\n").join(eol + lineIndent(text, prop.offset));
  return { offset: value.offset, length: value.length, content };
}

function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => b.offset - a.offset);
  let out = text;
  for (const e of sorted) out = out.slice(0, e.offset) + e.content + out.slice(e.offset + e.length);
  return out;
}

/** Every comment's text in order, skipping those inside `skip` (the replaced entry). */
function comments(text: string, skip: Span | null): string[] {
  const out: string[] = [];
  const scanner = createScanner(text, false);
  for (let kind = scanner.scan(); kind !== EOF_TOKEN; kind = scanner.scan()) {
    if (kind !== LINE_COMMENT && kind !== BLOCK_COMMENT) continue;
    const at = scanner.getTokenOffset();
    if (skip !== null && at >= skip.start && at < skip.end) continue;
    out.push(text.slice(at, at + scanner.getTokenLength()));
  }
  return out;
}

/**
 * The result must be the old document plus the entry, with the same comments (but those inside
 * the replaced old entry), in the host's syntax; otherwise HOST_CONFIG_UNEDITABLE.
 */
export function verifyJsonEdit(before: string, after: string, edit: JsonEntryEdit, replacedSpan: Span | null): void {
  const errors: ParseError[] = [];
  const root = parseTree(after, errors, parseOptions(edit.syntax));
  const why = "serverfs could not add the entry without changing the rest of the file; add it by hand (serverfs connect prints it)";
  if (errors.length > 0 || root === undefined) throw uneditable(edit, why);
  const expected = getNodeValue(parseTree(before, [], parseOptions(edit.syntax))!) as Record<string, Record<string, unknown>>;
  expected[edit.key] = { ...(expected[edit.key] ?? {}), [edit.name]: edit.entry };
  if (!Bun.deepEquals(getNodeValue(root), expected, true)) throw uneditable(edit, why);
  if (!Bun.deepEquals(comments(after, null), comments(before, replacedSpan))) throw uneditable(edit, why);
}
