// The host directories, besides the workdir, that a provider can see and print, and that a caller
// must never learn: they name the Bridge user's home (and so its user name), where the Bridge
// keeps its state, and where providers keep their settings, logins and extensions. Collected once
// from the Bridge's deployment paths and from both the Bridge's and the providers' environments
// (the private provider env file may move HOME, CODEX_HOME or TMPDIR).
import path from "node:path";
import type { DeploymentPaths } from "../../config/paths.ts";
import { isWindowsStyle } from "./path-style.ts";

export type HostPlaceholder = "<home>" | "<state>" | "<tmp>" | "<provider-config>";

export interface HostRoot {
  path: string;
  placeholder: HostPlaceholder;
}

export interface HostRootInput {
  paths: Pick<DeploymentPaths, "stateDir" | "tmpDir" | "runDir">;
  /** Environments whose values a provider may print: the Bridge's own and the providers'. */
  envs: ReadonlyArray<Readonly<Record<string, string | undefined>>>;
  homedir: string;
  tmpdir: string;
}

// Where the native runtimes keep their settings when their variable is unset (under home).
const PROVIDER_DIR_DEFAULTS: Array<{ variable: string | null; dir: string }> = [
  { variable: "CODEX_HOME", dir: ".codex" },
  { variable: "CLAUDE_CONFIG_DIR", dir: ".claude" },
  { variable: null, dir: ".qoder" },
];
// Explicitly placed XDG and Windows profile directories: providers keep settings, caches and
// extensions there. Their defaults lie under home, which is redacted anyway.
const PROVIDER_DIR_VARIABLES = ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "APPDATA", "LOCALAPPDATA"];
const HOME_VARIABLES = ["HOME", "USERPROFILE"];
const TMP_VARIABLES = ["TMPDIR", "TMP", "TEMP"];

function absolute(p: string | undefined): p is string {
  return typeof p === "string" && p.length > 0 && (p.startsWith("/") || isWindowsStyle(p));
}

function joinLike(base: string, name: string): string {
  return isWindowsStyle(base) ? path.win32.join(base, name) : path.posix.join(base, name);
}

export function bridgeHostRoots(input: HostRootInput): HostRoot[] {
  const out: HostRoot[] = [];
  const add = (p: string | undefined, placeholder: HostPlaceholder) => {
    if (absolute(p) && !out.some((r) => r.path === p && r.placeholder === placeholder)) out.push({ path: p, placeholder });
  };
  const values = (name: string) => input.envs.map((e) => e[name]);
  const homes = [input.homedir, ...HOME_VARIABLES.flatMap(values)].filter(absolute);
  for (const h of homes) add(h, "<home>");
  add(input.paths.stateDir, "<state>");
  add(input.paths.runDir, "<state>");
  add(input.paths.tmpDir, "<tmp>");
  add(input.tmpdir, "<tmp>");
  for (const name of TMP_VARIABLES) for (const v of values(name)) add(v, "<tmp>");
  for (const d of PROVIDER_DIR_DEFAULTS) {
    const set = d.variable === null ? [] : values(d.variable).filter(absolute);
    for (const v of set) add(v, "<provider-config>");
    for (const h of homes) add(joinLike(h, d.dir), "<provider-config>");
  }
  for (const name of PROVIDER_DIR_VARIABLES) for (const v of values(name)) add(v, "<provider-config>");
  return out;
}
