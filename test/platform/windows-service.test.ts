// `serverfs service` on Windows: the Task Scheduler XML goes through the real schtasks. Under Wine
// 8.0, schtasks /Create /XML parses the UTF-16 XML for real (malformed XML is refused) and
// registers the task as a file under %SystemRoot%\System32\Tasks; /Delete really removes it.
// Wine's /Query prints nothing and its /Run and /End succeed without doing anything, and its
// taskschd ignores the logon trigger, the principal and the Exec action ("stub"), so what the
// task does once registered needs real Windows (the windows.yml workflow).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTaskSchedulerManager, scheduledTaskXml, TASK_NAME } from "../../platform/windows/service.ts";
import { runTool } from "../../platform/service/run-command.ts";
import { isWine, onWindows, removeTree } from "./windows-helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "serverfs-winsvc-"));
afterAll(() => removeTree(dir));

const env = process.env as Record<string, string | undefined>;
const userId = () => (env.USERDOMAIN ? `${env.USERDOMAIN}\\${env.USERNAME}` : (env.USERNAME ?? ""));
const taskFile = (name: string) => join(env.SystemRoot ?? env.SYSTEMROOT ?? "C:\\windows", "System32", "Tasks", name);
const utf16 = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
/**
 * The registered task's XML, or null when no such task is registered. Windows answers through
 * `schtasks /Query /XML`; Wine's /Query is a stub, so there the task file Wine stores is read.
 */
function registered(name: string): string | null {
  if (!isWine) {
    const r = runTool(["schtasks", "/Query", "/TN", name, "/XML"], env);
    return r.code === 0 ? r.stdout : null;
  }
  if (!existsSync(taskFile(name))) return null;
  const bytes = readFileSync(taskFile(name));
  return bytes[0] === 0xff && bytes[1] === 0xfe ? bytes.subarray(2).toString("utf16le") : bytes.toString("utf8");
}
const definition = { executable: [process.execPath, "C:\\Program Files\\serverfs dir\\cli.ts"], configPath: "C:\\Users\\me\\serverfs config & co.toml" };

describe.skipIf(!onWindows)("Task Scheduler through schtasks (needs Windows: schtasks)", () => {
  test("schtasks /Create /XML accepts the UTF-16 task XML and registers it; /Delete removes it", () => {
    const name = `serverfs-test-${process.pid}`;
    const file = join(dir, "task.xml");
    writeFileSync(file, utf16(scheduledTaskXml(definition, userId())));
    const created = runTool(["schtasks", "/Create", "/TN", name, "/XML", file, "/F"], env);
    expect(created).toMatchObject({ found: true, code: 0 });
    // The registered definition is ours (Wine's taskschd drops the Exec action: a stub).
    const text = registered(name);
    expect(text).toContain("serverfs Agent Bridge");
    if (!isWine) expect(text).toContain("<Command>");
    // Task Scheduler kept the normal priority (it writes <Priority> only when it is not the default 7).
    expect(text).toContain("<Priority>4</Priority>");
    expect(runTool(["schtasks", "/Delete", "/TN", name, "/F"], env)).toMatchObject({ code: 0 });
    expect(registered(name)).toBeNull();
    expect(runTool(["schtasks", "/Delete", "/TN", name, "/F"], env).code).not.toBe(0);
  });

  test("schtasks refuses malformed task XML, so the acceptance above is a real parse", () => {
    const name = `serverfs-bad-${process.pid}`;
    const file = join(dir, "bad.xml");
    writeFileSync(file, utf16('<?xml version="1.0" encoding="UTF-16"?>\r\n<Task version="1.2"><Settings>'));
    expect(runTool(["schtasks", "/Create", "/TN", name, "/XML", file, "/F"], env).code).not.toBe(0);
    expect(registered(name)).toBeNull();
  });

  test("the manager installs and uninstalls serverfs-bridge; its copy of the XML is kept in the state dir", () => {
    const stateDir = join(dir, "state");
    const manager = createTaskSchedulerManager({ platform: "win32", home: dir, env, uid: -1 }, stateDir);
    expect(manager.isInstalled()).toBe(false);
    const report = manager.install(definition);
    expect(report.lines).toEqual([`registered scheduled task ${TASK_NAME}`, `started ${TASK_NAME}`]);
    expect(manager.isInstalled()).toBe(true);
    expect(registered(TASK_NAME)).toContain("serverfs Agent Bridge");
    expect(readFileSync(manager.definitionPath, "utf8")).toBe(scheduledTaskXml(definition, userId()));
    // The UTF-16 copy handed to schtasks does not stay behind.
    expect(existsSync(`${manager.definitionPath}.utf16`)).toBe(false);
    expect(manager.uninstall().lines).toEqual([`deleted scheduled task ${TASK_NAME}`]);
    expect(manager.isInstalled()).toBe(false);
    expect(registered(TASK_NAME)).toBeNull();
    expect(manager.uninstall().lines).toEqual(["no scheduled task was installed"]);
  });
});
