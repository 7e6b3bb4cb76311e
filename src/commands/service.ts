// `serverfs service install|uninstall|start|stop|status [--config FILE] [--allow-root]`: run the
// Bridge under the OS service manager for the current user. The manager-specific work lives in
// platform/*/service.ts; this file parses flags, loads the deployment, and reports.
//
// Root: the Bridge runs agents with the rights of its user, so `install` refuses root (and the
// Windows SYSTEM account) unless --allow-root says the operator means it (e.g. a single-user
// container where root is the only user).
//
// `status` asks the Bridge itself (one runtime.list over its socket or pipe), not only the
// manager: exit 0 when the Bridge answers, 3 when it does not (the LSB "not running" code).
import { isAbsolute, resolve } from "node:path";
import { bridgeClientFor } from "../bridge/ipc/connect.ts";
import { loadRegistry } from "../config/load.ts";
import { defaultStateDir, deploymentPaths } from "../config/paths.ts";
import type { Registry } from "../config/types.ts";
import { ServerfsError } from "../errors.ts";
import { currentServiceHost, isPrivileged, runningExecutable, serviceManagerFor } from "../../platform/service/index.ts";
import type { ServiceHost } from "../../platform/service/types.ts";
import { flag, parseCommandLine } from "./args.ts";
import { SERVICE } from "./specs.ts";

type Action = "install" | "uninstall" | "start" | "stop" | "status";
export const EXIT_NOT_ANSWERING = 3;
const STATUS_TIMEOUT_MS = 5000;

function write(lines: string[]): Promise<void> {
  const text = lines.map((l) => `${l}\n`).join("");
  return new Promise((done) => {
    if (process.stdout.write(text)) done();
    else process.stdout.once("drain", () => done());
  });
}

/** Whether the Bridge of this deployment answers one runtime.list; the error code when it does not. */
export async function bridgeAnswers(registry: Registry, host: ServiceHost): Promise<{ ok: true; runtimes: number } | { ok: false; code: string }> {
  try {
    const client = bridgeClientFor(registry, { timeoutMs: STATUS_TIMEOUT_MS, platform: host.platform });
    const result = await client.call("runtime.list", {});
    const runtimes = Array.isArray(result.runtimes) ? result.runtimes.length : 0;
    return { ok: true, runtimes };
  } catch (err) {
    return { ok: false, code: err instanceof ServerfsError ? err.code : "AGENT_BRIDGE_UNAVAILABLE" };
  }
}

export async function main(argv: string[]): Promise<number> {
  // The table (src/commands/specs.ts) holds which action needs --config FILE (install and status
  // read the configuration; the others find the service by its state directory) and that only
  // install takes --allow-root.
  const { subcommand, args } = parseCommandLine(argv, SERVICE);
  const action = subcommand as Action;
  const host = currentServiceHost();
  const configArg = flag(args, "config");
  const configPath = configArg === undefined ? undefined : isAbsolute(configArg) ? configArg : resolve(configArg);
  const registry = configPath === undefined ? null : (await loadRegistry({ configFile: configPath })).registry;
  const stateDir = registry ? deploymentPaths(registry).stateDir : defaultStateDir();
  const manager = serviceManagerFor(host, stateDir);

  switch (action) {
    case "install": {
      if (isPrivileged(host) && !args.switches.has("allow-root")) {
        throw new ServerfsError(
          "SERVICE_ROOT_REFUSED",
          "refusing to install the Bridge for root/SYSTEM: install it as the user whose agents it runs (or pass --allow-root)",
        );
      }
      const report = manager.install({ executable: runningExecutable(), configPath: configPath! });
      await write(report.lines);
      return 0;
    }
    case "uninstall":
      await write(manager.uninstall().lines);
      return 0;
    case "start":
      // Asking the manager to start what it was never given can only fail, without a useful word.
      if (!manager.isInstalled()) {
        const file = configPath ?? "FILE";
        throw new ServerfsError(
          "SERVICE_MANAGER_FAILED",
          `no Bridge service is installed (${manager.name}: ${manager.definitionPath} does not exist); fix: serverfs service install --config ${file}, or run serverfs bridge --config ${file} by hand`,
        );
      }
      await write(manager.start().lines);
      return 0;
    case "stop":
      await write(manager.stop().lines);
      return 0;
    case "status": {
      const state = manager.managerState();
      const answer = await bridgeAnswers(registry!, host);
      await write([
        `service: ${manager.isInstalled() ? "installed" : "not installed"} (${manager.name}: ${manager.definitionPath})`,
        `manager: ${state ?? "unavailable"}`,
        answer.ok ? `bridge: answering (${answer.runtimes} runtimes)` : `bridge: not answering (${answer.code})`,
      ]);
      return answer.ok ? 0 : EXIT_NOT_ANSWERING;
    }
  }
}
