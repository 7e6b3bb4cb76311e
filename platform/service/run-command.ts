// Runs a service manager's command-line tool (systemctl, launchctl, schtasks) with an argv, never a
// shell, found on the given PATH, with a timeout so a wedged manager cannot hang the CLI.
import { platformError, type PlatformFailure } from "../errors.ts";
import type { CommandResult } from "./types.ts";

const TIMEOUT_MS = 30_000;

export function runTool(argv: string[], env: Readonly<Record<string, string | undefined>>): CommandResult {
  const [tool, ...args] = argv;
  const resolved = tool === undefined ? null : Bun.which(tool, { PATH: env.PATH ?? env.Path ?? "" });
  if (resolved === null) return { found: false, code: -1, stdout: "", stderr: "" };
  const child = Bun.spawnSync([resolved, ...args], {
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: TIMEOUT_MS,
  });
  return {
    found: true,
    code: child.exitCode ?? 128,
    stdout: child.stdout.toString(),
    stderr: child.stderr.toString(),
  };
}

export function managerUnavailable(name: string, why: string): PlatformFailure {
  return platformError("SERVICE_MANAGER_UNAVAILABLE", `${name} is not available: ${why}`);
}

const MAX_REASON_CHARS = 200;
// What looks like a credential in a manager's words: `password=...`, `token: ...`, URL userinfo.
const SECRET_ASSIGNMENT = /\b([A-Za-z0-9_.-]*(?:pass(?:word)?|secret|token|api[_-]?key|auth)[A-Za-z0-9_.-]*)(\s*[=:]\s*)\S+/gi;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi;

/**
 * The manager's own reason for a failure, fit for one diagnostic line: the first non-empty line of
 * its stderr (else stdout), control characters replaced, anything shaped like a credential
 * replaced by `<redacted>`, at most 200 characters. Empty when it said nothing.
 */
export function managerReason(result: Pick<CommandResult, "stdout" | "stderr">): string {
  const first = (text: string) => text.split(/\r?\n/).map((l) => l.trim()).find((l) => l !== "") ?? "";
  let line = first(result.stderr) || first(result.stdout);
  line = line.replace(/[\u0000-\u001f\u007f]/g, "?").replace(URL_USERINFO, "$1<redacted>@").replace(SECRET_ASSIGNMENT, "$1$2<redacted>");
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 3)}...` : line;
}

/** `'systemctl --user start' failed with exit code 5: <the manager's reason>` */
export function stepFailed(step: string, result: CommandResult): PlatformFailure {
  const reason = managerReason(result);
  return platformError("SERVICE_MANAGER_FAILED", `'${step}' failed with exit code ${result.code}${reason === "" ? "" : `: ${reason}`}`);
}

/** Run a step that must succeed; a failure carries the manager's own reason (managerReason). */
export function mustRun(name: string, argv: string[], env: Readonly<Record<string, string | undefined>>): CommandResult {
  const result = runTool(argv, env);
  if (!result.found) throw managerUnavailable(name, `'${argv[0]}' was not found on PATH`);
  if (result.code !== 0) throw stepFailed(argv.slice(0, 3).join(" "), result);
  return result;
}
