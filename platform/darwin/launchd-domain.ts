// Which launchd domain the Bridge's LaunchAgent goes into, and bootstrap's retry while a booted-out
// label drains. Pure over an injected command runner, so both are tested on Linux
// (test/platform/darwin-pure.test.ts).
//
// gui/<uid> exists only while the user is logged in at the console. Over SSH on a headless Mac
// `launchctl print gui/<uid>` fails ("Could not find domain"), so the agent goes into
// user/<uid>, the per-user background domain launchd keeps for every uid with a session. It starts
// at the next login and whenever `serverfs service start` kickstarts it. It is not killed when
// the GUI session ends, and it has no access to the GUI session's keychain.
import type { CommandResult } from "../service/types.ts";

export type RunLaunchctl = (args: string[]) => CommandResult;

export interface LaunchdDomain {
  domain: string;
  /** True when gui/<uid> was missing and the agent goes to the background user domain. */
  fallback: boolean;
}

export function launchdDomain(uid: number, run: RunLaunchctl): LaunchdDomain {
  const gui = `gui/${uid}`;
  const probe = run(["print", gui]);
  if (probe.found && probe.code === 0) return { domain: gui, fallback: false };
  return { domain: `user/${uid}`, fallback: true };
}

/** launchctl's exit code for EIO: bootstrap of a label whose previous instance is still draining. */
export const BOOTSTRAP_EIO = 5;
export const BOOTSTRAP_ATTEMPTS = 10;
export const BOOTSTRAP_RETRY_MS = 200;

/**
 * `launchctl bootstrap` right after `bootout` fails with 5 (EIO) until launchd has finished
 * tearing the old job down. Retry only that code, a bounded number of times. Returns the last
 * result: the caller maps a non-zero code to SERVICE_MANAGER_FAILED.
 */
export function bootstrapWithRetry(
  domain: string,
  plistPath: string,
  run: RunLaunchctl,
  sleep: (ms: number) => void,
  attempts = BOOTSTRAP_ATTEMPTS,
): CommandResult {
  let result = run(["bootstrap", domain, plistPath]);
  for (let i = 1; i < attempts && result.found && result.code === BOOTSTRAP_EIO; i++) {
    sleep(BOOTSTRAP_RETRY_MS);
    result = run(["bootstrap", domain, plistPath]);
  }
  return result;
}
