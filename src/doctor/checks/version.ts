// The binary and the machine it runs on, so a pasted report says what it was taken from.
import os from "node:os";
import { VERSION } from "../../version.ts";
import { fail, ok, type CheckResult } from "../types.ts";
import { osReleaseProblem } from "../../../platform/darwin/version.ts";
import { darwinFullSyncRoute, fullSyncDescription, type FullSyncRoute } from "../../../platform/fs/fullsync-darwin.ts";
import { IS_DARWIN, PLATFORM_NAME } from "../../../platform/os.ts";

export function platformText(): string {
  return `${PLATFORM_NAME} ${process.arch} (${os.release()}), bun ${Bun.version}`;
}

/** The platform line: a failure on an OS release serve refuses (PLATFORM_UNSUPPORTED). */
export function platformCheck(platform: NodeJS.Platform, release: string, text: string): CheckResult {
  const problem = osReleaseProblem(platform, release);
  if (problem === null) return ok("platform", "platform", text);
  return fail("platform", "platform", `${text}: ${problem}; serve refuses it (PLATFORM_UNSUPPORTED)`, "upgrade to macOS 11 or later");
}

/**
 * macOS only: how a sync reaches stable storage (docs/platform.md, durability). Always OK: with
 * `fsync` only, the detail names the gap, but there is nothing for the operator to change.
 */
export function durabilityCheck(route: FullSyncRoute): CheckResult {
  return ok("durability", "durability", fullSyncDescription(route));
}

export function versionChecks(): CheckResult[] {
  const checks = [ok("version", "serverfs", VERSION), platformCheck(PLATFORM_NAME, os.release(), platformText())];
  if (IS_DARWIN) checks.push(durabilityCheck(darwinFullSyncRoute()));
  return checks;
}
