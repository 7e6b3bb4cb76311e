// systemd --user integration: ~/.config/systemd/user/serverfs-bridge.service (XDG_CONFIG_HOME
// honoured). `install` writes the unit, reloads, and enables + starts it; the Bridge then starts
// at every login of this user (and across logouts only if the administrator enabled lingering,
// which serverfs never does by itself).
import { existsSync, mkdirSync, rmSync } from "node:fs";
// A systemd unit path is a Linux path whichever OS computes it (node:path would use backslashes on Windows).
import { posix } from "node:path";
import { writePrivateFileAtomic } from "../fs/private-file.ts";
import { isPlatformFailure, platformError } from "../errors.ts";
import { mustRun, runTool } from "../service/run-command.ts";
import type { ServiceDefinition, ServiceHost, ServiceManager } from "../service/types.ts";

export const UNIT_NAME = "serverfs-bridge.service";

const { isAbsolute, join } = posix;

export function systemdUnitPath(host: ServiceHost): string {
  const xdg = host.env.XDG_CONFIG_HOME;
  const configHome = xdg && isAbsolute(xdg) ? xdg : join(host.home, ".config");
  return join(configHome, "systemd", "user", UNIT_NAME);
}

/**
 * One ExecStart word, always double-quoted: inside quotes systemd takes C-style escapes, expands
 * `%` specifiers and `$` variables, so those are escaped; a newline cannot be represented.
 */
export function systemdQuote(word: string): string {
  if (/[\n\r\0]/.test(word)) throw platformError("INVALID_ARGUMENT", "a service argument cannot contain a line break");
  const escaped = word.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/%/g, "%%").replace(/\$/g, "$$$$");
  return `"${escaped}"`;
}

export function systemdUnit(def: ServiceDefinition): string {
  const exec = [...def.executable, "bridge", "--config", def.configPath].map(systemdQuote).join(" ");
  return [
    "# Written by `serverfs service install`; `serverfs service uninstall` removes it.",
    "[Unit]",
    "Description=serverfs Agent Bridge",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${exec}`,
    "Restart=on-failure",
    "RestartSec=2",
    "UMask=0077",
    // The Bridge stops its provider trees itself on SIGTERM; the cgroup kill is the backstop.
    "KillMode=mixed",
    // The Bridge gives each task a cgroup of its own under this unit's, so that a stop is proved
    // by an empty cgroup (docs/platform.md, "Stop").
    "Delegate=yes",
    "TimeoutStopSec=30",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}

export function createSystemdManager(host: ServiceHost): ServiceManager {
  const name = "systemd --user";
  const unitPath = systemdUnitPath(host);
  const systemctl = (...args: string[]) => mustRun(name, ["systemctl", "--user", ...args], host.env);
  return {
    name,
    definitionPath: unitPath,
    render: systemdUnit,
    isInstalled: () => existsSync(unitPath),
    install(def) {
      const text = systemdUnit(def);
      mkdirSync(join(unitPath, ".."), { recursive: true, mode: 0o700 });
      writePrivateFileAtomic(unitPath, text, "the systemd unit");
      const lines = [`wrote ${unitPath}`];
      try {
        systemctl("daemon-reload");
      } catch (err) {
        if (isPlatformFailure(err)) {
          throw platformError(
            err.code === "SERVICE_MANAGER_FAILED" ? "SERVICE_MANAGER_UNAVAILABLE" : err.code,
            "the unit file was written, but 'systemctl --user' is not usable here (no user session bus?); " +
              "run 'systemctl --user daemon-reload && systemctl --user enable --now serverfs-bridge.service' in a login session",
          );
        }
        throw err;
      }
      systemctl("enable", "--now", UNIT_NAME);
      lines.push(`enabled and started ${UNIT_NAME}`);
      return { lines };
    },
    uninstall() {
      const lines: string[] = [];
      // Best effort: the manager may be gone; the file is what matters.
      const disabled = runTool(["systemctl", "--user", "disable", "--now", UNIT_NAME], host.env);
      if (disabled.found && disabled.code === 0) lines.push(`stopped and disabled ${UNIT_NAME}`);
      if (existsSync(unitPath)) {
        rmSync(unitPath);
        lines.push(`removed ${unitPath}`);
        runTool(["systemctl", "--user", "daemon-reload"], host.env);
      } else {
        lines.push("no unit file was installed");
      }
      return { lines };
    },
    start() {
      systemctl("start", UNIT_NAME);
      return { lines: [`started ${UNIT_NAME}`] };
    },
    stop() {
      systemctl("stop", UNIT_NAME);
      return { lines: [`stopped ${UNIT_NAME}`] };
    },
    managerState() {
      // is-active prints the state and exits non-zero for anything but "active".
      const result = runTool(["systemctl", "--user", "is-active", UNIT_NAME], host.env);
      if (!result.found) return null;
      const state = result.stdout.trim().split("\n")[0] ?? "";
      return /^[a-z-]+$/.test(state) ? state : null;
    },
  };
}
