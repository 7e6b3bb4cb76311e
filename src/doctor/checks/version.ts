// The binary and the machine it runs on, so a pasted report says what it was taken from.
import os from "node:os";
import { VERSION } from "../../version.ts";
import { ok, type CheckResult } from "../types.ts";
import { PLATFORM_NAME } from "../../../platform/os.ts";

export function platformText(): string {
  return `${PLATFORM_NAME} ${process.arch} (${os.release()}), bun ${Bun.version}`;
}

export function versionChecks(): CheckResult[] {
  return [ok("version", "serverfs", VERSION), ok("platform", "platform", platformText())];
}
