// Which launchd domain the Bridge's LaunchAgent goes into, which session type its plist names for
// that domain, how the choice made at install is recorded and read back, and bootstrap's retry
// while a booted-out label drains. Pure over an injected command runner, so all of it is tested on
// Linux (test/platform/darwin-pure.test.ts, test/platform/darwin-launchd.test.ts).
//
// gui/<uid> exists only while the user is logged in at the console. Over SSH on a headless Mac
// `launchctl print gui/<uid>` fails ("Could not find domain"), so the agent goes into
// user/<uid>, the per-user background domain, which may exist without any login. It is not killed
// when the GUI session ends, and it has no access to the GUI session's keychain.
//
// The domain is chosen once, at install, and recorded: a probe at a later command could answer
// differently (a console login since a headless install) and miss the loaded job.
import type { CommandResult } from "../service/types.ts";

export type RunLaunchctl = (args: string[]) => CommandResult;

export interface LaunchdDomain {
  domain: string;
  /** True when gui/<uid> was missing and the agent goes to the background user domain. */
  fallback: boolean;
}

export const guiDomain = (uid: number): string => `gui/${uid}`;
export const userDomain = (uid: number): string => `user/${uid}`;

/** Every domain a LaunchAgent of this uid may be loaded in (an older serverfs could leave it in both). */
export const agentDomains = (uid: number): string[] => [guiDomain(uid), userDomain(uid)];

export function launchdDomain(uid: number, run: RunLaunchctl): LaunchdDomain {
  const gui = guiDomain(uid);
  const probe = run(["print", gui]);
  if (probe.found && probe.code === 0) return { domain: gui, fallback: false };
  return { domain: userDomain(uid), fallback: true };
}

/**
 * launchd.plist(5) `LimitLoadToSessionType`: an agent without the key is an Aqua (GUI login)
 * agent, so launchd loads it into gui/<uid> at every console login, even when it was bootstrapped
 * into user/<uid>. `Background` is the session of the per-user background domain, user/<uid>.
 */
export type SessionType = "Aqua" | "Background";

export function sessionTypeFor(domain: string): SessionType {
  return domain.startsWith("gui/") ? "Aqua" : "Background";
}

/** The record's content: the domain and a newline. */
export function domainRecord(domain: string): string {
  return `${domain}\n`;
}

/** The recorded domain, or null when the text is not exactly a record of one of this uid's domains. */
export function parseDomainRecord(text: string, uid: number): string | null {
  const domain = text.endsWith("\n") ? text.slice(0, -1) : text;
  return agentDomains(uid).includes(domain) ? domain : null;
}

export interface ResolvedDomain {
  domain: string;
  recorded: boolean;
  /** For the operator when the domain was probed: why there was no usable record, what was probed. */
  notes: string[];
}

/**
 * The domain a command after install works in: the recorded one, else (a LaunchAgent installed by
 * an older serverfs, or a damaged record) a fresh probe, which the notes say.
 * `record` is the record file's text, or null when there is none.
 */
export function resolveDomain(uid: number, record: string | null, run: RunLaunchctl): ResolvedDomain {
  const recorded = record === null ? null : parseDomainRecord(record, uid);
  if (recorded !== null) return { domain: recorded, recorded: true, notes: [] };
  const probed = launchdDomain(uid, run);
  const why = record === null ? "no launchd domain record (installed by an older serverfs?)" : "the launchd domain record is not valid";
  const found = probed.fallback ? `gui/${uid} does not exist, using ${probed.domain}` : `using ${probed.domain}`;
  return {
    domain: probed.domain,
    recorded: false,
    notes: [`${why}: probed, ${found}; run 'serverfs service install --config FILE' again to record it`],
  };
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
