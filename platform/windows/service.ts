// Task Scheduler integration: a logon-triggered task for the current user (never SYSTEM), created
// from XML with `schtasks /Create /XML`. The task runs with the user's interactive token at least
// privilege, restarts on failure, and has no execution time limit.
//
// Priority: without the element Task Scheduler uses 7, which starts the action in
// BELOW_NORMAL_PRIORITY_CLASS (a background task), and every provider the Bridge starts inherits
// that. 4 is NORMAL_PRIORITY_CLASS with normal thread, I/O and memory priority (5 and 6 are also
// the normal class, but with lower memory priority).
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writePrivateFileAtomic } from "../fs/private-file.ts";
import { xmlEscape } from "../darwin/service.ts";
import { mustRun, runTool } from "../service/run-command.ts";
import type { ServiceDefinition, ServiceHost, ServiceManager } from "../service/types.ts";
import { quoteWindowsArg } from "./argv-quote.ts";

export const TASK_NAME = "serverfs-bridge";
export const TASK_PRIORITY = 4;

export function scheduledTaskXml(def: ServiceDefinition, userId: string): string {
  const [command, ...prefix] = def.executable;
  const args = [...prefix, "bridge", "--config", def.configPath].map(quoteWindowsArg).join(" ");
  return [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    "  <RegistrationInfo>",
    "    <Description>serverfs Agent Bridge</Description>",
    "  </RegistrationInfo>",
    "  <Triggers>",
    "    <LogonTrigger>",
    "      <Enabled>true</Enabled>",
    `      <UserId>${xmlEscape(userId)}</UserId>`,
    "    </LogonTrigger>",
    "  </Triggers>",
    "  <Principals>",
    '    <Principal id="Author">',
    `      <UserId>${xmlEscape(userId)}</UserId>`,
    "      <LogonType>InteractiveToken</LogonType>",
    "      <RunLevel>LeastPrivilege</RunLevel>",
    "    </Principal>",
    "  </Principals>",
    "  <Settings>",
    "    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>",
    "    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>",
    "    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>",
    "    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>",
    `    <Priority>${TASK_PRIORITY}</Priority>`,
    "    <Hidden>true</Hidden>",
    "    <RestartOnFailure>",
    "      <Interval>PT1M</Interval>",
    "      <Count>3</Count>",
    "    </RestartOnFailure>",
    "  </Settings>",
    '  <Actions Context="Author">',
    "    <Exec>",
    `      <Command>${xmlEscape(command ?? "")}</Command>`,
    `      <Arguments>${xmlEscape(args)}</Arguments>`,
    "    </Exec>",
    "  </Actions>",
    "</Task>",
    "",
  ].join("\r\n");
}

function userIdOf(host: ServiceHost): string {
  const user = host.env.USERNAME ?? "";
  const domain = host.env.USERDOMAIN;
  return domain ? `${domain}\\${user}` : user;
}

export function createTaskSchedulerManager(host: ServiceHost, stateDir: string): ServiceManager {
  const name = "Task Scheduler";
  // A copy of what was registered, so `status` and `uninstall` know it was installed.
  const definitionPath = join(stateDir, "service", `${TASK_NAME}.xml`);
  return {
    name,
    definitionPath,
    render: (def) => scheduledTaskXml(def, userIdOf(host)),
    isInstalled: () => existsSync(definitionPath),
    install(def) {
      const xml = scheduledTaskXml(def, userIdOf(host));
      mkdirSync(join(definitionPath, ".."), { recursive: true });
      writePrivateFileAtomic(definitionPath, xml, "the scheduled task definition");
      // schtasks reads the XML as UTF-16 (the declaration says so): write that copy with a BOM.
      const forSchtasks = `${definitionPath}.utf16`;
      writeFileSync(forSchtasks, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, "utf16le")]));
      try {
        mustRun(name, ["schtasks", "/Create", "/TN", TASK_NAME, "/XML", forSchtasks, "/F"], host.env);
      } finally {
        rmSync(forSchtasks, { force: true });
      }
      mustRun(name, ["schtasks", "/Run", "/TN", TASK_NAME], host.env);
      return { lines: [`registered scheduled task ${TASK_NAME}`, `started ${TASK_NAME}`] };
    },
    uninstall() {
      const lines: string[] = [];
      runTool(["schtasks", "/End", "/TN", TASK_NAME], host.env);
      const deleted = runTool(["schtasks", "/Delete", "/TN", TASK_NAME, "/F"], host.env);
      if (deleted.found && deleted.code === 0) lines.push(`deleted scheduled task ${TASK_NAME}`);
      if (existsSync(definitionPath)) rmSync(definitionPath);
      if (lines.length === 0) lines.push("no scheduled task was installed");
      return { lines };
    },
    start() {
      mustRun(name, ["schtasks", "/Run", "/TN", TASK_NAME], host.env);
      return { lines: [`started ${TASK_NAME}`] };
    },
    stop() {
      mustRun(name, ["schtasks", "/End", "/TN", TASK_NAME], host.env);
      return { lines: [`ended ${TASK_NAME}`] };
    },
    managerState() {
      const r = runTool(["schtasks", "/Query", "/TN", TASK_NAME, "/FO", "LIST"], host.env);
      if (!r.found) return null;
      if (r.code !== 0) return "not registered";
      const status = /Status:\s*(.+)/.exec(r.stdout)?.[1]?.trim().toLowerCase();
      return status ?? "registered";
    },
  };
}
