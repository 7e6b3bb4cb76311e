// `serverfs service`: exact generated definitions (pure), and the real CLI run as a process
// against a temporary home. A recording `systemctl` placed first on PATH stands in for the user
// manager (this VM has no user session bus); the real socket status check talks to a real
// NDJSON listener.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { launchAgentPath, launchAgentPlist } from "../../platform/darwin/service.ts";
import { systemdQuote, systemdUnit, systemdUnitPath } from "../../platform/linux/service.ts";
import type { ServiceHost } from "../../platform/service/types.ts";
import { splitWindowsCommandLine } from "../../platform/windows/argv-quote.ts";
import { scheduledTaskXml } from "../../platform/windows/service.ts";
import { tempDir } from "../support/temp.ts";
import { removeTree } from "./windows-helpers.ts";

const root = tempDir("serverfs service ");
// removeTree: Windows Bun's recursive rmSync fails with EFAULT under Wine.
afterAll(() => removeTree(root));
const cli = join(import.meta.dir, "..", "..", "src", "cli.ts");

const host = (over: Partial<ServiceHost> = {}): ServiceHost => ({ platform: "linux", home: "/home/u", env: {}, uid: 1000, ...over });

describe("service definitions (pure)", () => {
  test("systemd unit: exact content, every word quoted, %, $, quotes and backslashes escaped", () => {
    const unit = systemdUnit({ executable: ["/opt/server fs/serverfs"], configPath: "/home/u/my cfg/100%$x\"\\.toml" });
    expect(unit).toBe(
      [
        "# Written by `serverfs service install`; `serverfs service uninstall` removes it.",
        "[Unit]",
        "Description=serverfs Agent Bridge",
        "",
        "[Service]",
        "Type=simple",
        'ExecStart="/opt/server fs/serverfs" "bridge" "--config" "/home/u/my cfg/100%%$$x\\"\\\\.toml"',
        "Restart=on-failure",
        "RestartSec=2",
        "UMask=0077",
        "KillMode=mixed",
        "Delegate=yes",
        "TimeoutStopSec=30",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
      ].join("\n"),
    );
    expect(() => systemdQuote("a\nb")).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
    expect(systemdUnitPath(host())).toBe("/home/u/.config/systemd/user/serverfs-bridge.service");
    expect(systemdUnitPath(host({ env: { XDG_CONFIG_HOME: "/x/cfg" } }))).toBe("/x/cfg/systemd/user/serverfs-bridge.service");
    // A relative XDG_CONFIG_HOME is invalid by the spec and ignored.
    expect(systemdUnitPath(host({ env: { XDG_CONFIG_HOME: "rel" } }))).toBe("/home/u/.config/systemd/user/serverfs-bridge.service");
  });

  test("launchd plist: program arguments one per element, XML-escaped", () => {
    const h = host({ platform: "darwin", home: "/Users/u", uid: 501 });
    const plist = launchAgentPlist({ executable: ["/Applications/A & B/serverfs"], configPath: "/Users/u/<cfg>.toml" }, h);
    expect(plist).toContain(
      [
        "  <array>",
        "    <string>/Applications/A &amp; B/serverfs</string>",
        "    <string>bridge</string>",
        "    <string>--config</string>",
        "    <string>/Users/u/&lt;cfg&gt;.toml</string>",
        "  </array>",
      ].join("\n"),
    );
    expect(plist).toContain("<string>dev.serverfs.bridge</string>");
    expect(plist).toContain("<key>SuccessfulExit</key>\n    <false/>");
    expect(launchAgentPath(h)).toBe("/Users/u/Library/LaunchAgents/dev.serverfs.bridge.plist");
  });

  test("Task Scheduler XML: logon trigger for the user, least privilege, arguments survive CommandLineToArgvW", () => {
    const xml = scheduledTaskXml(
      { executable: ["C:\\Program Files\\serverfs\\serverfs.exe"], configPath: 'C:\\Users\\u\\my "cfg"\\serverfs.toml' },
      "HOST\\u",
    );
    expect(xml).toContain("<UserId>HOST\\u</UserId>");
    expect(xml).toContain("<RunLevel>LeastPrivilege</RunLevel>");
    expect(xml).toContain("<LogonType>InteractiveToken</LogonType>");
    expect(xml).toContain("<Command>C:\\Program Files\\serverfs\\serverfs.exe</Command>");
    const args = /<Arguments>(.*)<\/Arguments>/.exec(xml)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&");
    expect(splitWindowsCommandLine(`prog ${args}`).slice(1)).toEqual(["bridge", "--config", 'C:\\Users\\u\\my "cfg"\\serverfs.toml']);
    expect(xml.includes("\r\n")).toBe(true);
  });

  test("Task Scheduler XML: the Bridge runs at normal priority (4), not the background default 7", () => {
    const xml = scheduledTaskXml({ executable: ["C:\\serverfs.exe"], configPath: "C:\\c.toml" }, "HOST\\u");
    const settings = /<Settings>([\s\S]*)<\/Settings>/.exec(xml)![1]!;
    expect(settings.match(/<Priority>[^<]*<\/Priority>/g)).toEqual(["<Priority>4</Priority>"]);
    expect(xml.match(/<Priority>/g)).toHaveLength(1);
  });
});

function deployment(name: string) {
  const dir = join(root, name);
  const home = join(dir, "home");
  const state = join(dir, "st");
  const workdir = join(dir, "wd");
  mkdirSync(home, { recursive: true });
  mkdirSync(workdir, { recursive: true });
  const config = join(dir, "my config.toml");
  writeFileSync(config, `[server]\nstate_dir = ${JSON.stringify(state)}\n\n[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(workdir)}\n`);
  return { dir, home, state, config };
}

/** A recording stand-in for systemctl: appends its argv to a log and exits with `code`. */
function fakeSystemctl(dir: string, code = 0, stdout = "", stderr = ""): { bin: string; log: string } {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const log = join(dir, "systemctl.log");
  writeFileSync(join(bin, "systemctl"), `#!/bin/sh\necho "$*" >> '${log}'\nprintf '%s' '${stdout}'\nprintf '%s' '${stderr}' >&2\nexit ${code}\n`);
  chmodSync(join(bin, "systemctl"), 0o755);
  return { bin, log };
}

async function runCli(args: string[], env: Record<string, string>) {
  const p = Bun.spawn([process.execPath, cli, "service", ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

describe.skipIf(process.platform !== "linux")("serverfs service (Linux, real CLI process)", () => {
  test("usage errors exit 2 with a coded line", async () => {
    for (const args of [[], ["frob"], ["install"], ["status"], ["start", "extra"], ["stop", "--bogus"]]) {
      const r = await runCli(args, { PATH: "/usr/bin:/bin", HOME: root });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^serverfs: service: USAGE_ERROR: /);
      expect(r.stderr.split("\n").length).toBe(2);
    }
  });

  test.skipIf(process.getuid?.() !== 0)("root is refused without --allow-root and nothing is written", async () => {
    const d = deployment("root");
    const r = await runCli(["install", "--config", d.config], { PATH: "/usr/bin:/bin", HOME: d.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("SERVICE_ROOT_REFUSED");
    expect(existsSync(join(d.home, ".config"))).toBe(false);
  });

  test("no systemctl on PATH: the unit is written, and the manager is reported unavailable with a code", async () => {
    const d = deployment("nomanager");
    const empty = join(d.dir, "empty-bin");
    mkdirSync(empty);
    const r = await runCli(["install", "--config", d.config, "--allow-root"], { PATH: empty, HOME: d.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^serverfs: service: SERVICE_MANAGER_UNAVAILABLE: the unit file was written/);
    const unit = readFileSync(join(d.home, ".config/systemd/user/serverfs-bridge.service"), "utf8");
    expect(unit).toContain(`ExecStart="${process.execPath}" "${cli}" "bridge" "--config" "${d.config}"`);
  });

  test("with a user manager: install reloads, enables and starts; XDG_CONFIG_HOME is honoured; uninstall removes", async () => {
    const d = deployment("manager");
    const fake = fakeSystemctl(d.dir);
    const xdg = join(d.dir, "xdg");
    const env = { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: d.home, XDG_CONFIG_HOME: xdg };
    const r = await runCli(["install", "--config", d.config, "--allow-root"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const unitPath = join(xdg, "systemd/user/serverfs-bridge.service");
    expect(r.stdout).toBe(`wrote ${unitPath}\nenabled and started serverfs-bridge.service\n`);
    expect(readFileSync(fake.log, "utf8")).toBe("--user daemon-reload\n--user enable --now serverfs-bridge.service\n");
    expect(existsSync(join(d.home, ".config"))).toBe(false);

    const stop = await runCli(["stop"], env);
    expect(stop.code).toBe(0);
    const un = await runCli(["uninstall"], env);
    expect(un.code).toBe(0);
    expect(un.stdout).toContain(`removed ${unitPath}`);
    expect(existsSync(unitPath)).toBe(false);
    const again = await runCli(["uninstall"], env);
    expect(again.stdout).toContain("no unit file was installed");
    expect(readFileSync(fake.log, "utf8").split("\n").slice(2, 5)).toEqual([
      "--user stop serverfs-bridge.service",
      "--user disable --now serverfs-bridge.service",
      "--user daemon-reload",
    ]);
  });

  test("a failing manager step is SERVICE_MANAGER_FAILED with the manager's reason: its first stderr line, credentials redacted", async () => {
    const d = deployment("failing");
    const unit = join(d.home, ".config/systemd/user/serverfs-bridge.service");
    mkdirSync(join(unit, ".."), { recursive: true });
    writeFileSync(unit, "[Unit]\n");
    const said = "Failed to start serverfs-bridge.service: Unit is masked (proxy http://me:hunter2@proxy:3128, password=hunter2).\nsecond line\n";
    const fake = fakeSystemctl(d.dir, 5, "", said);
    const r = await runCli(["start"], { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: d.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "serverfs: service: SERVICE_MANAGER_FAILED: 'systemctl --user start' failed with exit code 5: " +
        "Failed to start serverfs-bridge.service: Unit is masked (proxy http://<redacted>@proxy:3128, password=<redacted>\n",
    );
    // A manager that says nothing: the step and its code.
    const quiet = fakeSystemctl(join(d.dir, "quiet"), 5);
    const q = await runCli(["stop"], { PATH: `${quiet.bin}:/usr/bin:/bin`, HOME: d.home });
    expect(q.stderr).toBe("serverfs: service: SERVICE_MANAGER_FAILED: 'systemctl --user stop' failed with exit code 5\n");
  });

  test("start with no service installed: SERVICE_MANAGER_FAILED naming the install and the by-hand commands; the manager is not asked", async () => {
    const d = deployment("uninstalled");
    const fake = fakeSystemctl(d.dir, 5);
    const unit = join(d.home, ".config/systemd/user/serverfs-bridge.service");
    const r = await runCli(["start", "--config", d.config], { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: d.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `serverfs: service: SERVICE_MANAGER_FAILED: no Bridge service is installed (systemd --user: ${unit} does not exist); ` +
        `fix: serverfs service install --config ${d.config}, or run serverfs bridge --config ${d.config} by hand\n`,
    );
    expect(existsSync(fake.log)).toBe(false);
  });

  test("status asks the Bridge itself: 3 when nothing answers, 0 when runtime.list answers", async () => {
    const d = deployment("status");
    const fake = fakeSystemctl(d.dir, 3, "inactive");
    const env = { PATH: `${fake.bin}:/usr/bin:/bin`, HOME: d.home };
    const down = await runCli(["status", "--config", d.config], env);
    expect(down.code).toBe(3);
    expect(down.stdout).toContain("manager: inactive\n");
    expect(down.stdout).toContain("bridge: not answering (AGENT_BRIDGE_UNAVAILABLE)\n");

    // A real listener on the deployment's socket path, answering one NDJSON v1 request.
    const runDir = join(d.state, "run");
    mkdirSync(runDir, { recursive: true, mode: 0o700 });
    const requests: unknown[] = [];
    const server = Bun.listen({
      unix: join(runDir, "bridge.sock"),
      socket: {
        data(socket, data) {
          const request = JSON.parse(new TextDecoder().decode(data).trim()) as { request_id: string };
          requests.push(request);
          socket.write(`${JSON.stringify({ ok: true, request_id: request.request_id, result: { runtimes: [{ runtime: "fake" }] } })}\n`);
        },
      },
    });
    try {
      const up = await runCli(["status", "--config", d.config], env);
      expect(up.stderr).toBe("");
      expect(up.code).toBe(0);
      expect(up.stdout).toContain("bridge: answering (1 runtimes)\n");
      expect(requests).toEqual([{ protocol_version: 1, request_id: expect.any(String), method: "runtime.list", params: {} }]);
    } finally {
      server.stop(true);
    }
  });
});
