// launchd integration: a LaunchAgent in ~/Library/LaunchAgents, loaded into the user's GUI domain
// with `launchctl bootstrap gui/<uid>`, or user/<uid> on a Mac with no GUI login (over SSH; see
// launchd-domain.ts). The domain chosen at install is recorded in a private file beside serverfs's
// other per-user macOS data, and every later command works in it; the plist's
// LimitLoadToSessionType matches it, so launchd itself loads the agent only into that domain.
// RunAtLoad starts it whenever it is loaded; KeepAlive restarts it only after a crash (a clean exit
// stays stopped, so `service stop` works). ProcessType is Standard, not Background: Background
// caps CPU and throttles disk I/O, and the Bridge runs work the user is waiting for.
//
// Every launchctl call goes through one injected runner, so the whole manager runs on Linux
// against a model of launchd (test/platform/darwin-launchd.test.ts).
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
// A LaunchAgent path is a macOS path whichever OS computes it (node:path would use backslashes on Windows).
import { posix } from "node:path";
import { writePrivateFileAtomic } from "../fs/private-file.ts";
import { platformError } from "../errors.ts";
import { managerUnavailable, runTool, stepFailed } from "../service/run-command.ts";
import {
  agentDomains,
  bootstrapWithRetry,
  domainRecord,
  launchdDomain,
  resolveDomain,
  type ResolvedDomain,
  type RunLaunchctl,
  type SessionType,
  sessionTypeFor,
} from "./launchd-domain.ts";
import type { CommandResult, ServiceDefinition, ServiceHost, ServiceManager } from "../service/types.ts";

export const LAUNCH_AGENT_LABEL = "dev.serverfs.bridge";

const { join } = posix;

export function launchAgentPath(host: ServiceHost): string {
  return join(host.home, "Library", "LaunchAgents", `${LAUNCH_AGENT_LABEL}.plist`);
}

/** Where install records the launchd domain it chose (one line, `gui/<uid>` or `user/<uid>`). */
export function launchdDomainRecordPath(host: ServiceHost): string {
  return join(host.home, "Library", "Application Support", "serverfs", "launchd-domain");
}

export function xmlEscape(text: string): string {
  if (/[\0-\x08\x0b\x0c\x0e-\x1f]/.test(text)) {
    throw platformError("INVALID_ARGUMENT", "a service argument cannot contain control characters");
  }
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/** `sessionType` defaults to Aqua, launchd's own assumption for an agent plist without the key. */
export function launchAgentPlist(def: ServiceDefinition, host: ServiceHost, sessionType: SessionType = "Aqua"): string {
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
    "  <key>LimitLoadToSessionType</key>",
    `  <string>${sessionType}</string>`,
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

/** The tools the manager uses; tests pass a model of launchd and a sleep that returns at once. */
export interface LaunchdTools {
  launchctl: RunLaunchctl;
  sleep: (ms: number) => void;
}

export function createLaunchdManager(host: ServiceHost, tools: Partial<LaunchdTools> = {}): ServiceManager {
  const name = "launchd";
  const plistPath = launchAgentPath(host);
  const recordPath = launchdDomainRecordPath(host);
  const launchctl = tools.launchctl ?? ((args: string[]) => runTool(["launchctl", ...args], host.env));
  const sleep = tools.sleep ?? ((ms: number) => Bun.sleepSync(ms));
  const targetIn = (domain: string) => `${domain}/${LAUNCH_AGENT_LABEL}`;
  const found = (r: CommandResult): CommandResult => {
    if (!r.found) throw managerUnavailable(name, "'launchctl' was not found on PATH");
    return r;
  };
  /** `launchctl print` of the job in `domain`: its description when loaded there, else null. */
  const printedIn = (domain: string): string | null => {
    const r = found(launchctl(["print", targetIn(domain)]));
    return r.code === 0 ? r.stdout : null;
  };
  const runningIn = (printed: string) => /state = running/.test(printed);
  const failed = (step: string, r: CommandResult) => stepFailed(`launchctl ${step}`, r);
  const bootstrap = (domain: string) => {
    const boot = found(bootstrapWithRetry(domain, plistPath, launchctl, sleep));
    if (boot.code !== 0) throw failed(`bootstrap ${domain}`, boot);
  };
  const readRecord = (): string | null => {
    try {
      return readFileSync(recordPath, "utf8");
    } catch {
      return null;
    }
  };
  // Read (and, without a record, probed) once per command.
  let resolved: ResolvedDomain | null = null;
  const where = () => (resolved ??= resolveDomain(host.uid, readRecord(), launchctl));
  /** Boot the job out of every domain it is loaded in; a bootout that leaves it loaded fails. */
  const unloadEverywhere = (): string[] => {
    const lines: string[] = [];
    for (const domain of agentDomains(host.uid)) {
      if (printedIn(domain) === null) continue;
      const out = launchctl(["bootout", targetIn(domain)]);
      if (out.code !== 0 && printedIn(domain) !== null) throw failed(`bootout ${domain}`, out);
      lines.push(`unloaded ${LAUNCH_AGENT_LABEL} from ${domain}`);
    }
    return lines;
  };
  return {
    name,
    definitionPath: plistPath,
    // What install would write now: install probes afresh.
    render: (def) => launchAgentPlist(def, host, sessionTypeFor(launchdDomain(host.uid, launchctl).domain)),
    isInstalled: () => existsSync(plistPath),
    install(def) {
      // Install is where the domain is chosen; every later command reads the record. Without
      // launchctl the probe means nothing, so nothing is written.
      found(launchctl(["version"]));
      const { domain, fallback } = launchdDomain(host.uid, launchctl);
      const sessionType = sessionTypeFor(domain);
      mkdirSync(join(plistPath, ".."), { recursive: true });
      mkdirSync(join(host.home, "Library", "Logs"), { recursive: true });
      mkdirSync(join(recordPath, ".."), { recursive: true, mode: 0o700 });
      writePrivateFileAtomic(plistPath, launchAgentPlist(def, host, sessionType), "the LaunchAgent");
      writePrivateFileAtomic(recordPath, domainRecord(domain), "the launchd domain record");
      const lines = [`wrote ${plistPath} (LimitLoadToSessionType ${sessionType})`, `recorded the launchd domain ${domain} in ${recordPath}`];
      // Re-installing replaces a loaded agent, in whichever domain an earlier install left it.
      lines.push(...unloadEverywhere());
      bootstrap(domain);
      lines.push(`loaded ${LAUNCH_AGENT_LABEL} into ${domain}`);
      if (fallback) lines.push(`no GUI login for uid ${host.uid} (gui/${host.uid} does not exist): using the background domain ${domain}`);
      return { lines };
    },
    uninstall() {
      // Both domains, not only the recorded one: an older serverfs could leave the job in both.
      // Without launchctl nothing can be loaded, and the files are what matters.
      const lines = launchctl(["version"]).found ? unloadEverywhere() : ["'launchctl' was not found on PATH: nothing to unload"];
      if (existsSync(plistPath)) {
        rmSync(plistPath);
        lines.push(`removed ${plistPath}`);
      } else {
        lines.push("no LaunchAgent was installed");
      }
      if (existsSync(recordPath)) {
        rmSync(recordPath);
        lines.push(`removed ${recordPath}`);
      }
      return { lines };
    },
    start() {
      const { domain, notes } = where();
      const lines = [...notes];
      // Not loaded after a reboot into a domain launchd does not load it into, or after a bootout.
      if (printedIn(domain) === null) {
        if (!existsSync(plistPath)) {
          throw platformError("SERVICE_MANAGER_FAILED", "the LaunchAgent is not installed: run 'serverfs service install --config FILE' first");
        }
        bootstrap(domain);
        lines.push(`loaded ${LAUNCH_AGENT_LABEL} into ${domain}`);
      }
      const kick = found(launchctl(["kickstart", targetIn(domain)]));
      if (kick.code !== 0) throw failed(`kickstart ${domain}`, kick);
      lines.push(`started ${LAUNCH_AGENT_LABEL} in ${domain}`);
      return { lines };
    },
    stop() {
      const { domain, notes } = where();
      const lines = [...notes];
      // The recorded domain first, then the other one, where an older serverfs may have left a second load.
      const [other] = agentDomains(host.uid).filter((d) => d !== domain);
      for (const d of [domain, other!]) {
        const printed = printedIn(d);
        if (printed === null) {
          if (d === domain) lines.push(`${LAUNCH_AGENT_LABEL} is not loaded in ${d}: nothing to stop`);
          continue;
        }
        if (!runningIn(printed)) {
          lines.push(`${LAUNCH_AGENT_LABEL} is not running in ${d}`);
          continue;
        }
        const kill = found(launchctl(["kill", "SIGTERM", targetIn(d)]));
        if (kill.code !== 0) throw failed(`kill SIGTERM ${d}`, kill);
        lines.push(`sent SIGTERM to ${LAUNCH_AGENT_LABEL} in ${d}`);
        if (d !== domain) lines.push(`${LAUNCH_AGENT_LABEL} was also loaded in ${d}: run 'serverfs service install --config FILE' again to leave one load`);
      }
      return { lines };
    },
    managerState() {
      if (!launchctl(["version"]).found) return null;
      const { domain, recorded } = where();
      const printed = printedIn(domain);
      const state = printed === null ? "not loaded" : runningIn(printed) ? "running" : "loaded";
      const [other] = agentDomains(host.uid).filter((d) => d !== domain);
      const second = printedIn(other!) === null ? "" : `; also loaded in ${other}`;
      return `${state} in ${domain}${recorded ? "" : " (no domain record: probed)"}${second}`;
    },
  };
}
