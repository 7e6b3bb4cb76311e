// The commands doctor's hints name for starting and restarting the Bridge. `serverfs service
// start` is named only when a service is installed for this user (otherwise it can only fail);
// else the hint says how to install one, or how to run the Bridge by hand.
import { currentServiceHost, serviceManagerFor } from "../../platform/service/index.ts";
import type { DoctorContext } from "./context.ts";

export interface BridgeCommands {
  /** "serverfs service start", or how to start it without a service. */
  start: string;
  /** "serverfs service stop, then start", or the same by hand. */
  restart: string;
}

const memo = new WeakMap<object, BridgeCommands>();

function installedManager(stateDir: string): string | null {
  try {
    const manager = serviceManagerFor(currentServiceHost(), stateDir);
    return manager.isInstalled() ? manager.name : null;
  } catch {
    return null; // no service manager integration on this OS: only the foreground Bridge is left
  }
}

export function bridgeCommands(ctx: Pick<DoctorContext, "source" | "paths">): BridgeCommands {
  const known = memo.get(ctx);
  if (known) return known;
  const file = ctx.source.format === "toml" && ctx.source.file !== null ? ctx.source.file : "FILE";
  const manager = installedManager(ctx.paths.stateDir);
  const commands: BridgeCommands =
    manager !== null
      ? { start: `serverfs service start (its ${manager} service is installed)`, restart: "serverfs service stop, then serverfs service start" }
      : {
          start: `serverfs bridge --config ${file} in a terminal, or install it as a service: serverfs service install --config ${file} (no service is installed)`,
          restart: `stop the running serverfs bridge (SIGTERM or Ctrl-C), then serverfs bridge --config ${file} again (no service is installed)`,
        };
  memo.set(ctx, commands);
  return commands;
}
