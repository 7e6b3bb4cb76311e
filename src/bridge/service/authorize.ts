// Task authorization (docs/design/task-lifecycle.md#authorization): the one policy both `serve`
// (before its RPC) and the Bridge (again, since a peer can reach the socket directly) apply, so
// the two cannot disagree. authorizeTask is lexical; authorize also resolves the start directory.
import fs from "node:fs";
import path from "node:path";
import { ServerfsError, errnoCode } from "../../errors.ts";
import type { Registry, TaskProfile, Workdir } from "../../config/types.ts";
import { workdirPolicy } from "../../fs/workdir-policy.ts";
import { isWithin } from "../../../platform/paths.ts";
import { runtimeFamilyOf } from "../../config/runtime-catalog.ts";

const PROFILE_RANK: Record<string, number> = { disabled: 0, review: 1, "workspace-write": 2 };

/** Runtimes that run a foreign agent with its own tools (every family but the fake): they must hold the writer lease. */
export function requiresWorkspaceWrite(runtime: string): boolean {
  const family = runtimeFamilyOf(runtime);
  return family !== null && family !== "fake";
}

export interface TaskRequest {
  runtime: string;
  /** The workdir alias. */
  workdir: string;
  profile: TaskProfile;
}

/**
 * The file tools' path policy applied to a task's starting directory (normalised, "" = root):
 * RESERVED_PATH / HIDDEN_PATH_NOT_ALLOWED / DENIED_PATH.
 */
export function checkStartPath(workdir: Workdir, rel: string, shown: string = rel): void {
  // The file tools' own policy object for this workdir (workdirPolicy), so the start directory
  // obeys exactly the hidden, deny and reserved-name rules a file call does.
  workdirPolicy(workdir).policy.check(workdir.alias, rel === "" ? [] : rel.split("/"), shown);
}

/**
 * In order: workdir, mode, allowlist, profile rank, writability, runtimes that need
 * workspace-write, then the starting directory. `start` normalises it ("" = root) and is called
 * only once the checks before it passed, so their codes win; `shown` is the caller's spelling.
 */
export function authorizeTask(registry: Registry, req: TaskRequest, start: (w: Workdir) => string, shown?: string): Workdir {
  const { runtime, workdir: alias, profile } = req;
  const workdir = registry.workdirs.find((w) => w.alias === alias);
  if (!workdir) throw new ServerfsError("WORKDIR_NOT_FOUND", `workdir '${alias.slice(0, 64)}' is not configured`);
  if (workdir.agent_mode === "disabled") throw new ServerfsError("AGENT_DISABLED", `agent tasks are disabled on workdir ${alias}`);
  if (!workdir.agent_runtimes.includes(runtime)) {
    throw new ServerfsError("AGENT_RUNTIME_NOT_ALLOWED", `runtime '${runtime.slice(0, 64)}' is not allowed on workdir ${alias}`);
  }
  if (PROFILE_RANK[profile]! > PROFILE_RANK[workdir.agent_mode]!) {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `profile ${profile} exceeds workdir ${alias}'s agent mode`);
  }
  if (profile === "workspace-write" && workdir.read_only) {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `workdir ${alias} is read-only`);
  }
  if (requiresWorkspaceWrite(runtime) && profile !== "workspace-write") {
    throw new ServerfsError("AGENT_PROFILE_NOT_ALLOWED", `runtime ${runtime} requires the workspace-write profile`);
  }
  // Lexical first, so a refused name is refused whether or not it exists.
  const rel = start(workdir);
  checkStartPath(workdir, rel, shown ?? rel);
  return workdir;
}

export interface Authorized {
  workdir: Workdir;
  /** Real path of the workdir root. */
  root: string;
  /** Real path of the starting directory. */
  cwd: string;
}

/** authorizeTask, then the start directory resolved on disk: it must stay inside and be a directory. */
export function authorize(registry: Registry, runtime: string, alias: string, profile: TaskProfile, rel: string): Authorized {
  const workdir = authorizeTask(registry, { runtime, workdir: alias, profile }, () => rel);
  let root: string;
  let cwd: string;
  try {
    root = fs.realpathSync(workdir.path);
    cwd = fs.realpathSync(path.join(root, rel));
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw new ServerfsError("WORKDIR_PATH_NOT_FOUND", `path '${rel.slice(0, 200)}' does not exist`);
    throw new ServerfsError("INVALID_WORKDIR_PATH", `path '${rel.slice(0, 200)}' cannot be resolved`);
  }
  if (!isWithin(cwd, root)) {
    throw new ServerfsError("INVALID_WORKDIR_PATH", `path '${rel.slice(0, 200)}' leaves the workdir`);
  }
  // And again on where it resolved: a symlink must not lead into a hidden, denied or reserved directory.
  if (cwd !== root) checkStartPath(workdir, path.relative(root, cwd).split(path.sep).join("/"), rel);
  if (!fs.statSync(cwd).isDirectory()) throw new ServerfsError("WORKDIR_PATH_NOT_FOUND", `path '${rel.slice(0, 200)}' is not a directory`);
  return { workdir, root, cwd };
}
