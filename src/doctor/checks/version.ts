// The binary and the machine it runs on, so a pasted report says what it was taken from.
import os from "node:os";
import { VERSION } from "../../version.ts";
import { ok, type CheckResult } from "../types.ts";

export function platformText(): string {
  return `${process.platform} ${process.arch} (${os.release()}), bun ${Bun.version}`;
}

export function versionChecks(): CheckResult[] {
  return [ok("version", "serverfs", VERSION), ok("platform", "platform", platformText())];
}
