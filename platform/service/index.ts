// Picks the service manager for the OS and describes the running serverfs executable.
import { homedir } from "node:os";
import { platformError } from "../errors.ts";
import { osKindOf, PLATFORM_NAME, selectFor } from "../os.ts";
import { createLaunchdManager } from "../darwin/service.ts";
import { createSystemdManager } from "../linux/service.ts";
import { createTaskSchedulerManager } from "../windows/service.ts";
import type { ServiceHost, ServiceManager } from "./types.ts";

export type { ServiceDefinition, ServiceHost, ServiceManager, ServiceReport } from "./types.ts";

export function currentServiceHost(): ServiceHost {
  return {
    platform: PLATFORM_NAME,
    home: homedir(),
    env: process.env,
    uid: typeof process.getuid === "function" ? process.getuid() : -1,
  };
}

/**
 * argv prefix that runs this serverfs: the compiled binary itself, or (from a checkout) the bun
 * binary plus the entry script. Bun places a compiled program's modules under /$bunfs/ (POSIX)
 * or B:\~BUN\ (Windows).
 */
export function runningExecutable(): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs/") || /^[A-Za-z]:[\\/]~BUN[\\/]/.test(main);
  return compiled ? [process.execPath] : [process.execPath, main];
}

/** True when running as root (POSIX euid 0) or as the Windows SYSTEM account. */
export function isPrivileged(host: ServiceHost): boolean {
  if (osKindOf(host.platform) === "windows") {
    const user = (host.env.USERNAME ?? "").toUpperCase();
    return user === "SYSTEM" || user.endsWith("$");
  }
  const euid = typeof process.geteuid === "function" ? process.geteuid() : host.uid;
  return euid === 0 || host.uid === 0;
}

export function serviceManagerFor(host: ServiceHost, stateDir: string): ServiceManager {
  return selectFor<ServiceManager>(host.platform, {
    linux: () => createSystemdManager(host),
    darwin: () => createLaunchdManager(host),
    windows: () => createTaskSchedulerManager(host, stateDir),
    other: () => {
      throw platformError("PLATFORM_UNSUPPORTED", `no service manager integration for ${host.platform}`);
    },
  });
}
