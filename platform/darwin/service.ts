// launchd integration: a LaunchAgent in ~/Library/LaunchAgents, loaded into the user's GUI domain
// with `launchctl bootstrap gui/<uid>`, or user/<uid> on a Mac with no GUI login (over SSH; see
// launchd-domain.ts). RunAtLoad starts it at login; KeepAlive restarts it only after a crash (a
// clean exit stays stopped, so `service stop` works). ProcessType is Standard, not Background:
// Background caps CPU and throttles disk I/O, and the Bridge runs work the user is waiting for.
import { existsSync, mkdirSync, rmSync } from "node:fs";
// A LaunchAgent path is a macOS path whichever OS computes it (node:path would use backslashes on Windows).
import { posix } from "node:path";
import { writePrivateFileAtomic } from "../fs/private-file.ts";
import { platformError } from "../errors.ts";
import { managerUnavailable, mustRun, runTool } from "../service/run-command.ts";
import { bootstrapWithRetry, launchdDomain } from "./launchd-domain.ts";
import type { ServiceDefinition, ServiceHost, ServiceManager } from "../service/types.ts";

export const LAUNCH_AGENT_LABEL = "dev.serverfs.bridge";

const { join } = posix;

export function launchAgentPath(host: ServiceHost): string {
  return join(host.home, "Library", "LaunchAgents", `${LAUNCH_AGENT_LABEL}.plist`);
}

export function xmlEscape(text: string): string {
  if (/[\0-\x08\x0b\x0c\x0e-\x1f]/.test(text)) {
    throw platformError("INVALID_ARGUMENT", "a service argument cannot contain control characters");
  }
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

export function launchAgentPlist(def: ServiceDefinition, host: ServiceHost): string {
  const args = [...def.executable, "bridge", "--config", def.configPath];
  const log = join(host.home, "Library", "Logs", "serverfs-bridge.log");
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  <string>${LAUNCH_AGENT_LABEL}</string>`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...args.map((a) => `    <string>${xmlEscape(a)}</string>`),
    "  </array>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
    "  <key>ProcessType</key>",
    "  <string>Standard</string>",
    "  <key>Umask</key>",
    "  <integer>63</integer>",
    "  <key>StandardErrorPath</key>",
    `  <string>${xmlEscape(log)}</string>`,
    "</dict>",
    "</plist>",
    "",
  ].join("\n");
}

export function createLaunchdManager(host: ServiceHost): ServiceManager {
  const name = "launchd";
  const plistPath = launchAgentPath(host);
  const launchctl = (args: string[]) => runTool(["launchctl", ...args], host.env);
  // Asked on first use (rendering the plist needs no launchctl), then kept for the command.
  let chosen: ReturnType<typeof launchdDomain> | null = null;
  const where = () => (chosen ??= launchdDomain(host.uid, launchctl));
  const targetOf = () => `${where().domain}/${LAUNCH_AGENT_LABEL}`;
  const loaded = () => {
    const r = launchctl(["print", targetOf()]);
    return r.found && r.code === 0 ? r.stdout : null;
  };
  return {
    name,
    definitionPath: plistPath,
    render: (def) => launchAgentPlist(def, host),
    isInstalled: () => existsSync(plistPath),
    install(def) {
      mkdirSync(join(plistPath, ".."), { recursive: true });
      mkdirSync(join(host.home, "Library", "Logs"), { recursive: true });
      writePrivateFileAtomic(plistPath, launchAgentPlist(def, host), "the LaunchAgent");
      // Re-installing replaces a loaded agent.
      const { domain, fallback } = where();
      if (loaded() !== null) launchctl(["bootout", targetOf()]);
      const boot = bootstrapWithRetry(domain, plistPath, launchctl, (ms) => Bun.sleepSync(ms));
      if (!boot.found) throw managerUnavailable(name, "'launchctl' was not found on PATH");
      if (boot.code !== 0) {
        throw platformError("SERVICE_MANAGER_FAILED", `'launchctl bootstrap ${domain}' failed with exit code ${boot.code}`);
      }
      const lines = [`wrote ${plistPath}`, `loaded ${LAUNCH_AGENT_LABEL} into ${domain}`];
      if (fallback) lines.push(`no GUI login for uid ${host.uid} (gui/${host.uid} does not exist): using the background domain ${domain}`);
      return { lines };
    },
    uninstall() {
      const lines: string[] = [];
      if (loaded() !== null && launchctl(["bootout", targetOf()]).code === 0) lines.push(`unloaded ${LAUNCH_AGENT_LABEL}`);
      if (existsSync(plistPath)) {
        rmSync(plistPath);
        lines.push(`removed ${plistPath}`);
      } else {
        lines.push("no LaunchAgent was installed");
      }
      return { lines };
    },
    start() {
      mustRun(name, ["launchctl", "kickstart", targetOf()], host.env);
      return { lines: [`started ${LAUNCH_AGENT_LABEL}`] };
    },
    stop() {
      mustRun(name, ["launchctl", "kill", "SIGTERM", targetOf()], host.env);
      return { lines: [`sent SIGTERM to ${LAUNCH_AGENT_LABEL}`] };
    },
    managerState() {
      const which = runTool(["launchctl", "version"], host.env);
      if (!which.found) return null;
      const printed = loaded();
      if (printed === null) return "not loaded";
      return /state = running/.test(printed) ? "running" : "loaded";
    },
  };
}
