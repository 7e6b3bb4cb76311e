// What differs between the Linux run and the Windows-under-Wine run (`npm run interop:wine`, whose
// driver is itself a Windows process, see wine.ts): the serverfs executable, the environment a
// service manager would give the Bridge, the survivor scan, the OS label of a row, and the
// long-running shell command of the cancel scenario with the check of its processes.
import fs from "node:fs";
import path from "node:path";
import os from "node:os";
import { processAlive, removeTree, wineVersion } from "../test/platform/windows-helpers.ts";
import { ProcWatch, selfCheck, type Seen, type Watch } from "./procscan.ts";
import { WinWatch, winSelfCheck } from "./winscan.ts";

export const WINDOWS = process.platform === "win32";
const REPO = path.resolve(import.meta.dir, "..");

/** Which of the two runs this is: results file, doc markers and the reproduce command follow it. */
export const LANE: "linux" | "wine" = WINDOWS ? "wine" : "linux";

export function osLabel(): string {
  if (!WINDOWS) return `${os.platform()}-${os.arch()} ${os.release()}`;
  const wine = wineVersion;
  return wine ? `windows-x64 under Wine ${wine}` : `windows-x64 ${os.release()}`;
}

export const serverfsExe = () => path.join(REPO, WINDOWS ? "dist/serverfs-windows-x64.exe" : "dist/serverfs-linux-x64");

/** A service manager's environment, not this shell's (Windows programs also need their system dirs). */
export function bridgeEnv(home: string): Record<string, string> {
  if (!WINDOWS) return { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" };
  const keep = ["SystemRoot", "windir", "SystemDrive", "COMSPEC", "PATHEXT", "TEMP", "TMP", "ProgramData", "ProgramFiles", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS"];
  const env: Record<string, string> = {};
  for (const k of keep) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH = process.env.PATH ?? "C:\\windows\\system32;C:\\windows";
  return { ...env, HOME: home, USERPROFILE: home, APPDATA: path.join(home, "AppData", "Roaming"), LOCALAPPDATA: path.join(home, "AppData", "Local") };
}

export function newWatch(marker: string, bridgePid: () => number | null): Watch {
  if (!WINDOWS) return new ProcWatch(marker);
  return new WinWatch(() => {
    const pid = bridgePid();
    return pid === null ? [] : [pid];
  });
}

export const scanSelfCheck = (): Promise<void> => (WINDOWS ? winSelfCheck() : selfCheck());

export function removeBase(dir: string): void {
  if (WINDOWS) removeTree(dir);
  else fs.rmSync(dir, { recursive: true, force: true });
}

function procCmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

function procAlive(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** The cancel scenario's shell tool: a shell that starts two long sleeps and writes all three pids. */
export interface CancelProbe {
  command(pidsFile: string): string;
  /** The written pids this OS can check directly (a sandbox's own pid namespace hides some). */
  toolPids(written: number[]): number[];
  /** How many of the two sleeps the scan saw. */
  sleepsSeen(seen: Seen[], written: number[]): number;
  alive(pid: number): boolean;
}

const linuxProbe: CancelProbe = {
  // Not starting with `sleep`: Claude Code 2.1.x blocks a command that opens with a long sleep.
  command: (pids) => `echo $$ > ${pids}; sleep 300 & echo $! >> ${pids}; sleep 301 & echo $! >> ${pids}; wait`,
  toolPids: (written) => written.filter((p) => /sleep|sh/.test(procCmdline(p))),
  sleepsSeen: (seen) => seen.filter((p) => /^sleep 30[01]/.test(p.cmd)).length,
  alive: procAlive,
};

// Wine has no POSIX shell and no sleep.exe: the command is the pinned Windows Bun running a script
// that starts two sleeping children (grandchildren of the agent's shell) and writes the pids. Its
// paths are the lane's Z: paths, which hold no spaces, so cmd.exe and a POSIX shell read it alike.
const windowsProbe: CancelProbe = {
  command: (pids) => `${process.execPath} ${path.join(import.meta.dir, "sleeper.ts")} ${pids}`,
  toolPids: (written) => written,
  sleepsSeen: (seen, written) => seen.filter((p) => written.slice(1).includes(p.pid)).length,
  alive: processAlive,
};

export const cancelProbe: CancelProbe = WINDOWS ? windowsProbe : linuxProbe;
