// Windows has no argv: a process gets one command-line string, and the C runtime /
// CommandLineToArgvW split it back. These two pure functions are exact inverses under those rules,
// so a Task Scheduler <Arguments> element or a CreateProcess command line carries every argument
// through unchanged (spaces, quotes, trailing backslashes, empty strings).
//
// Rules (CommandLineToArgvW, post-2008 msvcrt):
//   - 2n backslashes + '"'   -> n backslashes, and the quote toggles quoted mode
//   - 2n+1 backslashes + '"' -> n backslashes and a literal '"'
//   - backslashes not followed by '"' are literal
//   - in quoted mode, '""' is a literal '"' (we never emit it, but we parse it)
//   - the program name (first token) is special: it ends at the next quote or whitespace,
//     with no backslash processing, so it may not contain '"'.

const NEEDS_QUOTES = /[\s"]/;

/** Quote one argument (not the program name) so CommandLineToArgvW returns it verbatim. */
export function quoteWindowsArg(arg: string): string {
  if (arg.length > 0 && !NEEDS_QUOTES.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === "\\") {
      backslashes++;
      continue;
    }
    if (ch === '"') {
      out += "\\".repeat(backslashes * 2 + 1) + '"';
    } else {
      out += "\\".repeat(backslashes) + ch;
    }
    backslashes = 0;
  }
  return `${out}${"\\".repeat(backslashes * 2)}"`;
}

/** Quote the program name: no backslash processing applies, so it may not contain '"'. */
export function quoteWindowsProgram(program: string): string {
  if (program.includes('"') || program.includes("\0") || program === "") {
    throw new RangeError("a Windows program name cannot be empty or contain '\"'");
  }
  return /\s/.test(program) ? `"${program}"` : program;
}

export function joinWindowsCommandLine(argv: readonly string[]): string {
  const [program, ...args] = argv;
  if (program === undefined) throw new RangeError("empty argv");
  return [quoteWindowsProgram(program), ...args.map(quoteWindowsArg)].join(" ");
}

/** Split like CommandLineToArgvW. */
export function splitWindowsCommandLine(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  const isSpace = (c: string | undefined) => c === " " || c === "\t";
  // Program name.
  if (line[0] === '"') {
    const end = line.indexOf('"', 1);
    out.push(end === -1 ? line.slice(1) : line.slice(1, end));
    i = end === -1 ? line.length : end + 1;
  } else {
    while (i < line.length && !isSpace(line[i])) i++;
    out.push(line.slice(0, i));
  }
  for (;;) {
    while (i < line.length && isSpace(line[i])) i++;
    if (i >= line.length) break;
    let arg = "";
    let quoted = false;
    while (i < line.length) {
      const c = line[i]!;
      if (c === "\\") {
        let n = 0;
        while (line[i] === "\\") {
          n++;
          i++;
        }
        if (line[i] === '"') {
          arg += "\\".repeat(Math.floor(n / 2));
          if (n % 2 === 1) {
            arg += '"';
            i++;
          }
        } else {
          arg += "\\".repeat(n);
        }
        continue;
      }
      if (c === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 2;
          continue;
        }
        quoted = !quoted;
        i++;
        continue;
      }
      if (!quoted && isSpace(c)) break;
      arg += c;
      i++;
    }
    out.push(arg);
  }
  return out;
}
