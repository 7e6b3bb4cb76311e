// The command line a host will start serve with: this serverfs (the compiled executable, or bun
// plus src/cli.ts from a checkout) or `npx -y serverfs`, then `serve` and the deployment flags.
// The flags are checked exactly as `serve` checks them, so a host is never handed an entry that
// fails at start-up, and they are made independent of the current directory (hosts start serve
// wherever they like): a relative path becomes absolute; a `~` path stays as given, since serve
// expands it itself.
import path from "node:path";
import { runningExecutable } from "../../platform/service/index.ts";
import { loadRegistry, registryFromWorkdirArgs } from "../config/load.ts";
import { parseWorkdirSpec, startsAtHome } from "../config/workdir-spec.ts";
import type { ServeCommand } from "./connect-hosts.ts";
import { usage } from "./args.ts";

export type LaunchForm = "executable" | "checkout" | "npx";

export interface ServeLaunch extends ServeCommand {
  form: LaunchForm;
}

export interface DeploymentFlags {
  configFile: string | undefined;
  workdirs: readonly string[];
}

/** The `serve` flags for the entry, after checking them as serve would. */
export async function serveFlags(flags: DeploymentFlags, cwd: string = process.cwd()): Promise<string[]> {
  const { configFile, workdirs } = flags;
  if (configFile !== undefined && workdirs.length > 0) throw usage("give either --config FILE or --workdir, not both");
  if (configFile === undefined && workdirs.length === 0) {
    throw usage("connect needs --config FILE or at least one --workdir ALIAS=PATH[:rw] (what the host starts serve with)");
  }
  if (configFile !== undefined) {
    await loadRegistry({ configFile });
    return ["--config", path.resolve(cwd, configFile)];
  }
  await registryFromWorkdirArgs(workdirs, cwd);
  return workdirs.flatMap((text, i) => {
    const parsed = parseWorkdirSpec(text, i, cwd);
    // registryFromWorkdirArgs accepted every spec, so each parses.
    if (!parsed.ok) throw usage(`--workdir #${i + 1}: ${parsed.problem.reason}`);
    const { alias, givenPath, path: absolute, suffix } = parsed.spec;
    return ["--workdir", `${alias}=${startsAtHome(givenPath) ? givenPath : absolute}${suffix}`];
  });
}

export function serveLaunch(flags: string[], npx: boolean): ServeLaunch {
  if (npx) return { form: "npx", command: "npx", args: ["-y", "serverfs", "serve", ...flags] };
  const [command, ...prefix] = runningExecutable();
  return { form: prefix.length === 0 ? "executable" : "checkout", command: command!, args: [...prefix, "serve", ...flags] };
}
