// The `.env` syntax, parsed as data. Nothing is evaluated: no `export`, no `$VAR` expansion, no
// escapes. A value that a shell or Docker Compose would read differently from us is refused
// rather than guessed, so one file means one thing to every reader:
//   KEY=value            unquoted: no whitespace, quotes, `$`, `\` or backtick inside;
//                        ` #…` after it is a comment
//   KEY='any text'       single-quoted: taken literally (no `'` inside)
//   KEY="plain text"     double-quoted: taken literally, but `\` and `$` are refused
//   KEY=                 empty: the key means "none", as if absent
// Blank lines and lines starting with `#` are ignored; CRLF line ends are accepted; a key may
// appear once. Errors name the line and key, never the value.
import type { NamedProblem } from "./problems.ts";

export interface EnvEntry {
  value: string;
  line: number;
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseEnvText(text: string): { entries: Map<string, EnvEntry>; problems: NamedProblem[] } {
  const entries = new Map<string, EnvEntry>();
  const problems: NamedProblem[] = [];
  const lines = text.split("\n");
  lines.forEach((rawLine, index) => {
    const lineNo = index + 1;
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const where = `line ${lineNo}`;
    if (/^export\s/.test(trimmed)) {
      problems.push({ key: where, reason: "'export' is not supported (the file is data, not a shell script)" });
      return;
    }
    const eq = trimmed.indexOf("=");
    if (eq === -1) {
      problems.push({ key: where, reason: "expected KEY=VALUE" });
      return;
    }
    const key = trimmed.slice(0, eq).trim();
    if (!KEY.test(key)) {
      problems.push({ key: where, reason: "the key must be letters, digits and '_' (not starting with a digit)" });
      return;
    }
    const parsed = parseValue(trimmed.slice(eq + 1));
    if (typeof parsed !== "string") {
      problems.push({ key: `${where}: ${key}`, reason: parsed.reason });
      return;
    }
    const earlier = entries.get(key);
    if (earlier) {
      problems.push({ key: `${where}: ${key}`, reason: `duplicate key (first set on line ${earlier.line})` });
      return;
    }
    entries.set(key, { value: parsed, line: lineNo });
  });
  return { entries, problems };
}

function parseValue(afterEquals: string): string | { reason: string } {
  const text = afterEquals.replace(/^[ \t]+/, "");
  const quote = text[0];
  if (quote === "'" || quote === '"') {
    const close = text.indexOf(quote, 1);
    if (close === -1) return { reason: `unterminated ${quote === "'" ? "single" : "double"} quote (values are one line)` };
    const body = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest.trim() !== "" && !/^[ \t]+#/.test(rest)) return { reason: "unexpected text after the closing quote" };
    if (quote === '"' && /[\\$`]/.test(body)) {
      return { reason: "a double-quoted value may not contain '\\', '$' or '`' (a shell would interpret them); use single quotes" };
    }
    return body;
  }
  const hash = text.search(/[ \t]#/);
  const body = (hash === -1 ? text : text.slice(0, hash)).trim();
  if (body.startsWith("#")) return { reason: "a value starting with '#' is ambiguous; quote it" };
  if (/[\s'"$\\`]/.test(body)) {
    return { reason: "an unquoted value may not contain whitespace, quotes, '$', '\\' or '`'; use single quotes" };
  }
  return body;
}
