// The one executable lookup: what config validation, the Bridge's runtime adapters and doctor all
// use, so they cannot disagree about whether a provider is installed. An ACP `command` must be an
// absolute path; a native runtime's `bin` is an absolute path taken as is, or a bare command name
// looked up on PATH (absolute PATH entries only: a relative entry would depend on the Bridge's
// cwd). Symlinks are followed (packaged agents are often linked into a bin directory); the target
// must still be a regular file. Reasons do not repeat the path.
import * as fs from "node:fs";
import * as path from "node:path";
import { IS_WINDOWS, PLATFORM_NAME } from "../../platform/os.ts";

export type ExecutableProblem = "missing" | "directory" | "not_file" | "not_executable";

const PROBLEM_TEXT: Record<ExecutableProblem, string> = {
  missing: "no file exists at this path",
  directory: "is a directory, not an executable file",
  not_file: "is not a regular file",
  not_executable: "is not executable by this user",
};

/** Why the file at `file` cannot be run, as a kind, or null when it can. */
export function executableProblemKind(file: string, platform: NodeJS.Platform = PLATFORM_NAME): ExecutableProblem | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return "missing";
  }
  if (st.isDirectory()) return "directory";
  if (!st.isFile()) return "not_file";
  if (platform === "win32") return null; // Windows has no execute bit; CreateProcess decides.
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    return "not_executable";
  }
  return null;
}

/** Why a configured ACP command cannot be run, in words, or null. */
export function executableProblem(command: string, platform: NodeJS.Platform = PLATFORM_NAME): string | null {
  const kind = executableProblemKind(command, platform);
  return kind === null ? null : PROBLEM_TEXT[kind];
}

export type ExecutableLookup =
  | { file: string }
  /** An absolute `bin` that cannot be run. */
  | { problem: ExecutableProblem }
  /** A bare name found nowhere on PATH, or a relative path (never looked up). */
  | { problem: "not_on_path" };

export function lookupExecutable(bin: string, envPath: string | undefined = process.env.PATH): ExecutableLookup {
  if (path.isAbsolute(bin)) {
    const problem = executableProblemKind(bin);
    return problem === null ? { file: bin } : { problem };
  }
  if (bin.length === 0 || bin.includes("/") || bin.includes("\\")) return { problem: "not_on_path" };
  for (const dir of (envPath ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const names = IS_WINDOWS ? [bin, `${bin}.exe`, `${bin}.cmd`] : [bin];
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (executableProblemKind(candidate) === null) return { file: candidate };
    }
  }
  return { problem: "not_on_path" };
}

/** Absolute path of an executable regular file, or null. */
export function resolveExecutable(bin: string, envPath: string | undefined = process.env.PATH): string | null {
  const found = lookupExecutable(bin, envPath);
  return "file" in found ? found.file : null;
}
