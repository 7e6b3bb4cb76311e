// `serverfs service` on macOS, the whole launchd manager run on Linux: real files in a temporary
// home (plist, domain record), and every launchctl call answered by a model of launchd that keeps
// per-domain job state and answers with launchctl's exit codes and messages (113: no such
// domain or service; 5: bootstrap of a loaded label; 3: bootout or kill of a job that is not
// there). The real launchctl is exercised by the `launchd` job in .github/workflows/macos.yml.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionTypeFor } from "../../platform/darwin/launchd-domain.ts";
import { createLaunchdManager, LAUNCH_AGENT_LABEL, launchAgentPath, launchdDomainRecordPath } from "../../platform/darwin/service.ts";
import type { CommandResult, ServiceHost } from "../../platform/service/types.ts";
import { tempDir } from "../support/temp.ts";

const UID = 501;
const GUI = `gui/${UID}`;
const USER = `user/${UID}`;
const DEF = { executable: ["/usr/local/bin/serverfs"], configPath: "/Users/u/serverfs.toml" };

interface Job {
  running: boolean;
  /** LimitLoadToSessionType of the plist as launchd read it at load ("Aqua" when absent). */
  sessionType: string;
}

/** launchd for one uid: whether gui/<uid> exists, and the label's job in each domain. */
class LaunchdModel {
  gui: boolean;
  readonly jobs = new Map<string, Job>();
  readonly calls: string[][] = [];
  constructor(gui: boolean) {
    this.gui = gui;
  }
  private hasDomain(domain: string) {
    return domain === USER || (domain === GUI && this.gui);
  }
  private job(target: string | undefined): [string, Job | undefined] {
    const at = (target ?? "").lastIndexOf("/");
    const domain = (target ?? "").slice(0, at);
    const label = (target ?? "").slice(at + 1);
    return [domain, label === LAUNCH_AGENT_LABEL ? this.jobs.get(domain) : undefined];
  }
  /** Load a plist the way launchd does: its session type read from the file. */
  load(domain: string, plist: string) {
    const type = /<key>LimitLoadToSessionType<\/key>\s*<string>([^<]*)<\/string>/.exec(readFileSync(plist, "utf8"))?.[1] ?? "Aqua";
    this.jobs.set(domain, { running: /<key>RunAtLoad<\/key>\s*<true\/>/.test(readFileSync(plist, "utf8")), sessionType: type });
  }
  /** A reboot: no domain keeps a job. */
  reboot() {
    this.jobs.clear();
  }
  /** A domain comes up (a login): launchd loads the agents whose session type is that domain's. */
  domainStarts(domain: string, agentsDir: string) {
    const plist = join(agentsDir, `${LAUNCH_AGENT_LABEL}.plist`);
    if (!existsSync(plist)) return;
    const type = /<key>LimitLoadToSessionType<\/key>\s*<string>([^<]*)<\/string>/.exec(readFileSync(plist, "utf8"))?.[1] ?? "Aqua";
    if (type === sessionTypeFor(domain)) this.load(domain, plist);
  }
  run = (args: string[]): CommandResult => {
    this.calls.push(args);
    const ok = (stdout = ""): CommandResult => ({ found: true, code: 0, stdout, stderr: "" });
    const fail = (code: number, stderr: string): CommandResult => ({ found: true, code, stdout: "", stderr });
    const [verb, a, b] = args;
    switch (verb) {
      case "version":
        return ok("Darwin Bootstrapper Version 7.0.0\n");
      case "print": {
        if (a === GUI || a === USER) return this.hasDomain(a) ? ok(`${a} = {\n\ttype = ${a.split("/")[0]}\n}\n`) : fail(113, `Bad request.\nCould not find domain for port identifier: ${a}\n`);
        const [domain, job] = this.job(a);
        if (!job) return fail(113, `Bad request.\nCould not find service "${LAUNCH_AGENT_LABEL}" in domain for user gui: ${UID}\n`);
        return ok(`${domain}/${LAUNCH_AGENT_LABEL} = {\n\ttype = LaunchAgent\n\tstate = ${job.running ? "running" : "not running"}\n}\n`);
      }
      case "bootstrap":
        if (!this.hasDomain(a!)) return fail(125, "Bootstrap failed: 125: Domain does not support specified action\n");
        if (this.jobs.has(a!)) return fail(5, "Bootstrap failed: 5: Input/output error\n");
        this.load(a!, b!);
        return ok();
      case "bootout": {
        const [domain, job] = this.job(a);
        if (!job) return fail(3, "Boot-out failed: 3: No such process\n");
        this.jobs.delete(domain);
        return ok();
      }
      case "kickstart": {
        const [, job] = this.job(a);
        if (!job) return fail(113, `Could not find service "${LAUNCH_AGENT_LABEL}" in domain for user gui: ${UID}\n`);
        job.running = true;
        return ok();
      }
      case "kill": {
        const [, job] = this.job(b);
        if (a !== "SIGTERM" || !job?.running) return fail(3, "Failed to kill service: 3: No such process\n");
        job.running = false; // the Bridge exits 0 on SIGTERM, and KeepAlive{SuccessfulExit=false} leaves it stopped
        return ok();
      }
      default:
        return fail(64, `Unrecognized subcommand: ${verb}\n`);
    }
  };
}

function setup(gui: boolean) {
  const home = tempDir("sfs-launchd-");
  const host: ServiceHost = { platform: "darwin", home, env: {}, uid: UID };
  const launchd = new LaunchdModel(gui);
  // One manager per CLI command, as `serverfs service <action>` builds it.
  const command = () => createLaunchdManager(host, { launchctl: launchd.run, sleep: () => {} });
  return { home, host, launchd, command, plist: launchAgentPath(host), record: launchdDomainRecordPath(host) };
}

const sessionTypeIn = (plist: string) => /<key>LimitLoadToSessionType<\/key>\n {2}<string>([^<]*)<\/string>/.exec(readFileSync(plist, "utf8"))?.[1];
const verbs = (calls: string[][]) => calls.map((c) => c.join(" "));

describe("install chooses the domain, records it, and writes the matching session type", () => {
  test("headless (no gui/<uid>): user/<uid> is recorded and the plist says Background", () => {
    const s = setup(false);
    const { lines } = s.command().install(DEF);
    expect(readFileSync(s.record, "utf8")).toBe(`${USER}\n`);
    expect(statSync(s.record).mode & 0o777).toBe(0o600);
    expect(s.record).toBe(join(s.home, "Library", "Application Support", "serverfs", "launchd-domain"));
    expect(sessionTypeIn(s.plist)).toBe("Background");
    expect(verbs(s.launchd.calls)).toContain(`bootstrap ${USER} ${s.plist}`);
    expect([...s.launchd.jobs.keys()]).toEqual([USER]);
    expect(s.launchd.jobs.get(USER)).toEqual({ running: true, sessionType: "Background" });
    expect(lines).toContain(`recorded the launchd domain ${USER} in ${s.record}`);
    expect(lines).toContain(`no GUI login for uid ${UID} (gui/${UID} does not exist): using the background domain ${USER}`);
  });

  test("at a GUI login: gui/<uid> is recorded and the plist says Aqua", () => {
    const s = setup(true);
    const { lines } = s.command().install(DEF);
    expect(readFileSync(s.record, "utf8")).toBe(`${GUI}\n`);
    expect(sessionTypeIn(s.plist)).toBe("Aqua");
    expect([...s.launchd.jobs.keys()]).toEqual([GUI]);
    expect(s.launchd.jobs.get(GUI)!.sessionType).toBe("Aqua");
    expect(lines.some((l) => l.includes("no GUI login"))).toBe(false);
  });

  test("re-install at a GUI login after a headless one moves the job: out of user/<uid>, into gui/<uid>", () => {
    const s = setup(false);
    s.command().install(DEF);
    s.launchd.gui = true;
    const { lines } = s.command().install(DEF);
    expect([...s.launchd.jobs.keys()]).toEqual([GUI]);
    expect(readFileSync(s.record, "utf8")).toBe(`${GUI}\n`);
    expect(sessionTypeIn(s.plist)).toBe("Aqua");
    expect(lines).toContain(`unloaded ${LAUNCH_AGENT_LABEL} from ${USER}`);
  });

  test("launchd's own loading at login follows the session type: one load, in the recorded domain", () => {
    const s = setup(false);
    s.command().install(DEF);
    const agents = join(s.home, "Library", "LaunchAgents");
    s.launchd.reboot();
    s.launchd.gui = true;
    s.launchd.domainStarts(USER, agents);
    s.launchd.domainStarts(GUI, agents);
    expect([...s.launchd.jobs.keys()]).toEqual([USER]);
    // The defect this replaces: a plist without the key is an Aqua agent, loaded at the GUI login.
    writeFileSync(s.plist, readFileSync(s.plist, "utf8").replace(/ {2}<key>LimitLoadToSessionType<\/key>\n {2}<string>Background<\/string>\n/, ""));
    expect(sessionTypeIn(s.plist)).toBeUndefined();
    s.launchd.reboot();
    s.launchd.domainStarts(USER, agents);
    s.launchd.domainStarts(GUI, agents);
    expect([...s.launchd.jobs.keys()]).toEqual([GUI]);
  });
});

describe("start", () => {
  test("not loaded (after a reboot): bootstraps into the recorded domain, then kickstarts", () => {
    const s = setup(false);
    s.command().install(DEF);
    s.launchd.reboot();
    s.launchd.calls.length = 0;
    const { lines } = s.command().start();
    expect(verbs(s.launchd.calls)).toEqual([
      `print ${USER}/${LAUNCH_AGENT_LABEL}`,
      `bootstrap ${USER} ${s.plist}`,
      `kickstart ${USER}/${LAUNCH_AGENT_LABEL}`,
    ]);
    expect(s.launchd.jobs.get(USER)!.running).toBe(true);
    expect(lines).toEqual([`loaded ${LAUNCH_AGENT_LABEL} into ${USER}`, `started ${LAUNCH_AGENT_LABEL} in ${USER}`]);
  });

  test("loaded (stopped): only kickstarts", () => {
    const s = setup(true);
    s.command().install(DEF);
    s.command().stop();
    expect(s.launchd.jobs.get(GUI)!.running).toBe(false);
    s.launchd.calls.length = 0;
    expect(s.command().start().lines).toEqual([`started ${LAUNCH_AGENT_LABEL} in ${GUI}`]);
    expect(verbs(s.launchd.calls)).toEqual([`print ${GUI}/${LAUNCH_AGENT_LABEL}`, `kickstart ${GUI}/${LAUNCH_AGENT_LABEL}`]);
    expect(s.launchd.jobs.get(GUI)!.running).toBe(true);
  });

  test("with no LaunchAgent installed and nothing loaded: SERVICE_MANAGER_FAILED, nothing bootstrapped", () => {
    const s = setup(true);
    expect(() => s.command().start()).toThrow(expect.objectContaining({ code: "SERVICE_MANAGER_FAILED", message: expect.stringContaining("not installed") }));
    expect(s.launchd.calls.some((c) => c[0] === "bootstrap" || c[0] === "kickstart")).toBe(false);
  });

  test("a failing bootstrap names the step, its code and launchctl's reason (SERVICE_MANAGER_FAILED)", () => {
    const s = setup(true);
    s.command().install(DEF);
    s.launchd.reboot();
    s.launchd.gui = false; // the recorded gui/<uid> is gone: bootstrap answers 125
    expect(() => s.command().start()).toThrow(
      expect.objectContaining({ code: "SERVICE_MANAGER_FAILED", message: `'launchctl bootstrap ${GUI}' failed with exit code 125: Bootstrap failed: 125: Domain does not support specified action` }),
    );
  });
});

describe("every later command works in the recorded domain", () => {
  test("after a headless install, a GUI login does not redirect start, stop or status to gui/<uid>", () => {
    const s = setup(false);
    s.command().install(DEF);
    s.launchd.gui = true; // the user has logged in at the console since
    s.launchd.calls.length = 0;
    expect(s.command().stop().lines).toEqual([`sent SIGTERM to ${LAUNCH_AGENT_LABEL} in ${USER}`]);
    expect(s.command().managerState()).toBe(`loaded in ${USER}`);
    expect(s.command().start().lines).toEqual([`started ${LAUNCH_AGENT_LABEL} in ${USER}`]);
    expect(s.command().managerState()).toBe(`running in ${USER}`);
    // No probe of gui/<uid>, and no job there.
    expect(s.launchd.calls.some((c) => c.join(" ") === `print ${GUI}`)).toBe(false);
    expect(s.launchd.calls.some((c) => c[0] !== "print" && c[0] !== "version" && c.some((a) => a.startsWith(GUI)))).toBe(false);
    expect([...s.launchd.jobs.keys()]).toEqual([USER]);
  });

  test("without a record (installed by an older serverfs) the domain is probed, and the output says so", () => {
    const s = setup(false);
    s.command().install(DEF);
    rmSync(s.record);
    const { lines } = s.command().start();
    expect(lines[0]).toBe(
      `no launchd domain record (installed by an older serverfs?): probed, gui/${UID} does not exist, using ${USER}; run 'serverfs service install --config FILE' again to record it`,
    );
    expect(lines.at(-1)).toBe(`started ${LAUNCH_AGENT_LABEL} in ${USER}`);
    expect(s.command().managerState()).toBe(`running in ${USER} (no domain record: probed)`);
    expect(s.launchd.calls.some((c) => c.join(" ") === `print ${GUI}`)).toBe(true);
  });

  test("a damaged record (another uid's domain, extra text) is not trusted: probed, and said", () => {
    for (const text of ["gui/502\n", "user/501\nuser/501\n", "system\n", "", `${USER} `]) {
      const s = setup(true);
      s.command().install(DEF);
      writeFileSync(s.record, text);
      const { lines } = s.command().stop();
      expect(lines[0]).toBe(`the launchd domain record is not valid: probed, using ${GUI}; run 'serverfs service install --config FILE' again to record it`);
    }
  });
});

describe("stop", () => {
  test("a stopped or unloaded job is not an error; a second load left by an older version is stopped too", () => {
    const s = setup(true);
    s.command().install(DEF);
    s.command().stop();
    expect(s.command().stop().lines).toEqual([`${LAUNCH_AGENT_LABEL} is not running in ${GUI}`]);
    s.launchd.reboot();
    expect(s.command().stop().lines).toEqual([`${LAUNCH_AGENT_LABEL} is not loaded in ${GUI}: nothing to stop`]);
    // An older serverfs's double load: both running.
    s.launchd.load(GUI, s.plist);
    s.launchd.load(USER, s.plist);
    expect(s.command().managerState()).toBe(`running in ${GUI}; also loaded in ${USER}`);
    const { lines } = s.command().stop();
    expect(lines).toEqual([
      `sent SIGTERM to ${LAUNCH_AGENT_LABEL} in ${GUI}`,
      `sent SIGTERM to ${LAUNCH_AGENT_LABEL} in ${USER}`,
      `${LAUNCH_AGENT_LABEL} was also loaded in ${USER}: run 'serverfs service install --config FILE' again to leave one load`,
    ]);
    expect([...s.launchd.jobs.values()].map((j) => j.running)).toEqual([false, false]);
  });
});

describe("uninstall", () => {
  test("boots the job out of both domains (an older version's double load), removes the plist and the record", () => {
    const s = setup(true);
    s.command().install(DEF);
    s.launchd.load(USER, s.plist); // the second load an Aqua-by-default plist got at a console login
    s.launchd.calls.length = 0;
    const { lines } = s.command().uninstall();
    expect(verbs(s.launchd.calls).filter((c) => c.startsWith("bootout"))).toEqual([`bootout ${GUI}/${LAUNCH_AGENT_LABEL}`, `bootout ${USER}/${LAUNCH_AGENT_LABEL}`]);
    expect(s.launchd.jobs.size).toBe(0);
    expect(existsSync(s.plist)).toBe(false);
    expect(existsSync(s.record)).toBe(false);
    expect(lines).toEqual([
      `unloaded ${LAUNCH_AGENT_LABEL} from ${GUI}`,
      `unloaded ${LAUNCH_AGENT_LABEL} from ${USER}`,
      `removed ${s.plist}`,
      `removed ${s.record}`,
    ]);
    expect(s.command().uninstall().lines).toEqual(["no LaunchAgent was installed"]);
  });

  test("a bootout that leaves the job loaded fails (SERVICE_MANAGER_FAILED) and keeps the plist and the record", () => {
    const s = setup(false);
    s.command().install(DEF);
    const stuck = (args: string[]): CommandResult => (args[0] === "bootout" ? { found: true, code: 37, stdout: "", stderr: "Boot-out failed: 37: Operation already in progress\n" } : s.launchd.run(args));
    const manager = createLaunchdManager(s.host, { launchctl: stuck, sleep: () => {} });
    expect(() => manager.uninstall()).toThrow(expect.objectContaining({ code: "SERVICE_MANAGER_FAILED", message: `'launchctl bootout ${USER}' failed with exit code 37: Boot-out failed: 37: Operation already in progress` }));
    expect(existsSync(s.plist)).toBe(true);
    expect(readFileSync(s.record, "utf8")).toBe(`${USER}\n`);
  });

  test("without launchctl on PATH: install, start and stop are SERVICE_MANAGER_UNAVAILABLE (install writes nothing); uninstall still removes the files", () => {
    const s = setup(true);
    s.command().install(DEF);
    const absent = (): CommandResult => ({ found: false, code: -1, stdout: "", stderr: "" });
    const manager = createLaunchdManager(s.host, { launchctl: absent, sleep: () => {} });
    expect(manager.managerState()).toBeNull();
    // Install writes nothing: a domain probed without launchctl would be a guess.
    const fresh = setup(true);
    expect(() => createLaunchdManager(fresh.host, { launchctl: absent }).install(DEF)).toThrow(expect.objectContaining({ code: "SERVICE_MANAGER_UNAVAILABLE" }));
    expect([existsSync(fresh.plist), existsSync(fresh.record)]).toEqual([false, false]);
    for (const action of ["start", "stop"] as const) {
      expect(() => createLaunchdManager(s.host, { launchctl: absent })[action]()).toThrow(expect.objectContaining({ code: "SERVICE_MANAGER_UNAVAILABLE" }));
    }
    expect(manager.uninstall().lines).toEqual(["'launchctl' was not found on PATH: nothing to unload", `removed ${s.plist}`, `removed ${s.record}`]);
  });
});
