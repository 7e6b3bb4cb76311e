// Two glob dialects, compiled once to anchored regular expressions:
// - `fnmatch`: the basename matcher of find_files and of component deny globs (Python fnmatchcase:
//   `*` `?` `[...]` `[!...]`, no escapes, `*` may match anything because a name has no `/`).
// - `pathGlob`: ripgrep `--glob` semantics for search_text and slash deny globs: `*`/`?` never
//   cross `/`, `**/` is zero or more directories, a trailing `/**` is everything below, `[!...]` and
//   `[^...]` negate, an unterminated `[` is a literal, no braces. Case-sensitive on every platform.

function escapeRegex(ch: string): string {
  return /[\\^$.*+?()[\]{}|]/.test(ch) ? `\\${ch}` : ch;
}

/** Inside a character class only these need escaping (and `\-` is legal there in u-mode). */
function escapeClass(ch: string): string {
  return /[\\\]\[^-]/.test(ch) ? `\\${ch}` : ch;
}

/** Parse `[...]` starting after the `[` at chars[i]; returns the class source and the next index, or null if unterminated. */
function parseClass(chars: string[], i: number, caretNegates: boolean, excludeSlash: boolean): { re: string; next: number } | null {
  let j = i;
  let negate = false;
  if (chars[j] === "!" || (caretNegates && chars[j] === "^")) {
    negate = true;
    j++;
  }
  const bodyStart = j;
  if (chars[j] === "]") j++; // a leading `]` is a literal member
  while (j < chars.length && chars[j] !== "]") j++;
  if (j >= chars.length) return null;
  const body = chars.slice(bodyStart, j);
  let cls = "";
  for (let k = 0; k < body.length; k++) {
    const a = body[k] as string;
    const dash = body[k + 1];
    const b = body[k + 2];
    if (dash === "-" && b !== undefined) {
      // A reversed range matches nothing (Python drops it); keep it out of the class.
      if ((a.codePointAt(0) as number) <= (b.codePointAt(0) as number)) cls += `${escapeClass(a)}-${escapeClass(b)}`;
      k += 2;
    } else {
      cls += escapeClass(a);
    }
  }
  let re: string;
  if (cls === "") re = negate ? (excludeSlash ? "[^/]" : "[\\s\\S]") : "(?!)";
  else if (negate) re = excludeSlash ? `[^${cls}/]` : `[^${cls}]`;
  else re = `[${cls}]`;
  return { re, next: j + 1 };
}

/** Python fnmatchcase over a single name. */
export function compileFnmatch(pattern: string): RegExp {
  const chars = Array.from(pattern);
  let out = "";
  for (let i = 0; i < chars.length; ) {
    const c = chars[i++] as string;
    if (c === "*") {
      if (!out.endsWith("[\\s\\S]*")) out += "[\\s\\S]*";
    } else if (c === "?") {
      out += "[\\s\\S]";
    } else if (c === "[") {
      const cls = parseClass(chars, i, false, false);
      if (cls === null) out += "\\[";
      else {
        out += cls.re;
        i = cls.next;
      }
    } else {
      out += escapeRegex(c);
    }
  }
  return new RegExp(`^${out}$`, "u");
}

/** ripgrep/globset path glob, matched against a `/`-separated relative path. */
export function compilePathGlob(pattern: string, trailingMatchesSelf = false): RegExp {
  let p = pattern;
  if (p.startsWith("/")) p = p.slice(1);
  const chars = Array.from(p);
  let out = "";
  let i = 0;
  while (i < chars.length) {
    const c = chars[i] as string;
    if (c === "*" && chars[i + 1] === "*") {
      const atStart = i === 0 || chars[i - 1] === "/";
      const atEnd = i + 2 === chars.length;
      const slashAfter = chars[i + 2] === "/";
      if (atStart && slashAfter) {
        // `**/` : zero or more whole directories
        out += "(?:[^/]*/)*";
        i += 3;
        continue;
      }
      if (atStart && atEnd) {
        // trailing `/**` (or a bare `**`): everything below; deny rules also want the directory itself
        if (out.endsWith("/") && trailingMatchesSelf) out = `${out.slice(0, -1)}(?:/[\\s\\S]*)?`;
        else out += "[\\s\\S]*";
        i += 2;
        continue;
      }
      // `**` glued to other characters acts like `*`
      out += "[^/]*";
      i += 2;
      continue;
    }
    i++;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const cls = parseClass(chars, i, true, true);
      if (cls === null) out += "\\[";
      else {
        out += cls.re;
        i = cls.next;
      }
    } else out += escapeRegex(c);
  }
  return new RegExp(`^${out}$`, "u");
}

/**
 * search_text's `glob`: without `/` it matches the file name at any depth; with `/` the path
 * relative to the search root.
 */
export function compileSearchGlob(pattern: string): (relToSearchRoot: string, name: string) => boolean {
  if (!pattern.replace(/^\//, "").includes("/")) {
    const re = compilePathGlob(pattern.replace(/^\//, ""));
    if (pattern.startsWith("/")) return (rel) => re.test(rel);
    return (_rel, name) => re.test(name);
  }
  const re = compilePathGlob(pattern);
  return (rel) => re.test(rel);
}
