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

/** Run a step that must succeed; the tool's own stderr is summarised, not forwarded (it may name paths). */
export function mustRun(name: string, argv: string[], env: Readonly<Record<string, string | undefined>>): CommandResult {
  const result = runTool(argv, env);
  if (!result.found) throw managerUnavailable(name, `'${argv[0]}' was not found on PATH`);
  if (result.code !== 0) {
    throw platformError("SERVICE_MANAGER_FAILED", `'${argv.slice(0, 3).join(" ")}' failed with exit code ${result.code}`);
  }
  return result;
}
