// Where a deployment keeps its state, derived only from the registry and the current user, so
// the Bridge, `serve` (writer lease files), doctor, tasks and service all compute the same paths.
//
//   stateDir   server.state_dir, else the per-user default:
//                Linux    $XDG_STATE_HOME/serverfs (when absolute), else ~/.local/state/serverfs
//                macOS    ~/Library/Application Support/serverfs
//                Windows  %LOCALAPPDATA%\serverfs (else ~\AppData\Local\serverfs)
//   dbPath     <stateDir>/bridge.sqlite3
//   locksDir   <stateDir>/locks          lease files: <alias>-<8 hex of sha256(alias)>.lock
//   spoolDir   <stateDir>/spool
//   tmpDir     <stateDir>/tmp
//   socketPath POSIX: <stateDir>/run/bridge.sock; if that does not fit sun_path (108 bytes on
//              Linux, 104 on macOS, counting the NUL) it moves to
//              $XDG_RUNTIME_DIR/serverfs-<h>/bridge.sock, else /tmp/serverfs-<uid>-<h>/bridge.sock,
//              with h = 16 hex of sha256(stateDir). Windows: \\.\pipe\serverfs-<h>.
//   runDir     the directory holding the socket (POSIX); <stateDir>\run on Windows.
//
// The alias hash in lease names keeps `Docs` and `docs` (distinct aliases) apart on
// case-insensitive filesystems.
import { createHash } from "node:crypto";
import * as os from "node:os";
import * as nodePath from "node:path";
import { PLATFORM_NAME } from "../../platform/os.ts";
import type { Registry } from "./types.ts";

export interface DeploymentPaths {
  stateDir: string;
  socketPath: string;
  dbPath: string;
  locksDir: string;
  spoolDir: string;
  tmpDir: string;
  runDir: string;
}

/** The facts about the current user the derivation depends on (injectable for tests). */
export interface HostFacts {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
  uid: number;
}

export function currentHost(): HostFacts {
  return {
    platform: PLATFORM_NAME,
    env: process.env,
    homedir: os.homedir(),
    uid: typeof process.getuid === "function" ? process.getuid() : -1,
  };
}

/** sun_path capacity in bytes, including the terminating NUL. */
const SUN_PATH_BYTES: Partial<Record<NodeJS.Platform, number>> = { linux: 108, darwin: 104 };

function hex16(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 16);
}

function pathApi(platform: NodeJS.Platform): typeof nodePath.posix {
  return platform === "win32" ? nodePath.win32 : nodePath.posix;
}

export function defaultStateDir(host: HostFacts = currentHost()): string {
  const p = pathApi(host.platform);
  if (host.platform === "win32") {
    const local = host.env.LOCALAPPDATA;
    return p.join(local && p.isAbsolute(local) ? local : p.join(host.homedir, "AppData", "Local"), "serverfs");
  }
  if (host.platform === "darwin") return p.join(host.homedir, "Library", "Application Support", "serverfs");
  const xdg = host.env.XDG_STATE_HOME;
  return p.join(xdg && p.isAbsolute(xdg) ? xdg : p.join(host.homedir, ".local", "state"), "serverfs");
}

/** Only `server.state_dir` matters, so a caller without a config file can still find the default deployment. */
export interface DeploymentRef {
  server: Pick<Registry["server"], "state_dir">;
}

export function stateDirOf(registry: DeploymentRef, host: HostFacts = currentHost()): string {
  return registry.server.state_dir ?? defaultStateDir(host);
}

function fitsSunPath(socket: string, platform: NodeJS.Platform): boolean {
  const limit = SUN_PATH_BYTES[platform] ?? 104;
  return Buffer.byteLength(socket, "utf8") + 1 <= limit;
}

function socketPathFor(stateDir: string, host: HostFacts): string {
  if (host.platform === "win32") return `\\\\.\\pipe\\serverfs-${hex16(stateDir)}`;
  const p = nodePath.posix;
  const preferred = p.join(stateDir, "run", "bridge.sock");
  if (fitsSunPath(preferred, host.platform)) return preferred;
  const runtimeDir = host.env.XDG_RUNTIME_DIR;
  if (runtimeDir && p.isAbsolute(runtimeDir)) {
    const candidate = p.join(runtimeDir, `serverfs-${hex16(stateDir)}`, "bridge.sock");
    if (fitsSunPath(candidate, host.platform)) return candidate;
  }
  return p.join("/tmp", `serverfs-${host.uid}-${hex16(stateDir)}`, "bridge.sock");
}

export function deploymentPaths(registry: DeploymentRef, host: HostFacts = currentHost()): DeploymentPaths {
  const p = pathApi(host.platform);
  const stateDir = stateDirOf(registry, host);
  const socketPath = socketPathFor(stateDir, host);
  return {
    stateDir,
    socketPath,
    dbPath: p.join(stateDir, "bridge.sqlite3"),
    locksDir: p.join(stateDir, "locks"),
    spoolDir: p.join(stateDir, "spool"),
    tmpDir: p.join(stateDir, "tmp"),
    runDir: host.platform === "win32" ? p.join(stateDir, "run") : nodePath.posix.dirname(socketPath),
  };
}

export function leaseFileName(alias: string): string {
  return `${alias}-${createHash("sha256").update(alias, "utf8").digest("hex").slice(0, 8)}.lock`;
}

export function leasePath(registry: Registry, alias: string, host: HostFacts = currentHost()): string {
  return pathApi(host.platform).join(deploymentPaths(registry, host).locksDir, leaseFileName(alias));
}
