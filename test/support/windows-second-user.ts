// A second local user on a real Windows runner, for the tests that need someone who is not the
// Bridge's user (.github/workflows/windows.yml creates it with `net user /add` and a directory it
// may read, and names them in the environment):
//   SERVERFS_SECOND_USER, SERVERFS_SECOND_USER_PASSWORD  the account
//   SERVERFS_SECOND_USER_SHARE                           a directory the account may read (RX),
//                                                        and the runner user may write
// Its programs are Windows PowerShell 5.1 scripts (test/platform/fixtures/second-user/), copied into
// the share and started with `Start-Process -Credential` (CreateProcessWithLogonW, through the
// Secondary Logon service; it grants the new logon the window station, so it works from a service
// session too). The scripts need nothing of the repository's toolchain, which lives where the
// second user may not read. Their standard output is redirected into files the parent opens.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface SecondUser {
  name: string;
  password: string;
  share: string;
}

const FIXTURES = join(import.meta.dir, "..", "platform", "fixtures", "second-user");
const POWERSHELL = join(process.env.SystemRoot ?? "C:\\Windows", "System32", "WindowsPowerShell", "v1.0", "powershell.exe");

/** The second user, or null with why not (the tests then skip and say so). */
export function secondUser(): SecondUser | { skip: string } {
  if (process.platform !== "win32") return { skip: "needs Windows: a second local user" };
  const name = process.env.SERVERFS_SECOND_USER;
  const password = process.env.SERVERFS_SECOND_USER_PASSWORD;
  const share = process.env.SERVERFS_SECOND_USER_SHARE;
  if (!name || !password || !share) {
    return { skip: "needs SERVERFS_SECOND_USER, SERVERFS_SECOND_USER_PASSWORD and SERVERFS_SECOND_USER_SHARE (a second local user; .github/workflows/windows.yml makes one)" };
  }
  return { name, password, share };
}

let serial = 0;

/** A fresh directory in the share (the second user may read it and what it holds). */
export function shareDir(user: SecondUser, prefix: string): string {
  const dir = join(user.share, `${prefix}-${process.pid}-${++serial}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface SecondUserRun {
  /** The outer PowerShell's exit: the second user's script's exit code, or its own failure. */
  exited: Promise<number>;
  /** The script's standard output and error, once `exited` resolved. */
  output(): { stdout: string; stderr: string };
}

/**
 * Start `fixture` (a .ps1 in fixtures/second-user) as the second user with `request` as its JSON
 * argument. The password reaches the launching PowerShell by its environment, never its argv.
 */
export function startAsSecondUser(user: SecondUser, fixture: string, request: unknown): SecondUserRun {
  const dir = shareDir(user, "run");
  const script = join(dir, fixture);
  copyFileSync(join(FIXTURES, fixture), script);
  const requestFile = join(dir, "request.json");
  writeFileSync(requestFile, JSON.stringify(request));
  const stdoutFile = join(dir, "stdout.txt");
  const stderrFile = join(dir, "stderr.txt");
  const launcher = [
    "$ErrorActionPreference = 'Stop'",
    "$password = ConvertTo-SecureString $env:SFS_SU_PASSWORD -AsPlainText -Force",
    "$credential = New-Object System.Management.Automation.PSCredential(\"$env:COMPUTERNAME\\$env:SFS_SU_NAME\", $password)",
    // One argument string, quoted here: Windows PowerShell joins -ArgumentList items unquoted.
    "$arguments = '-NoProfile -NonInteractive -ExecutionPolicy Bypass -File \"' + $env:SFS_SU_SCRIPT + '\" \"' + $env:SFS_SU_REQUEST + '\"'",
    "$p = Start-Process -FilePath $env:SFS_SU_POWERSHELL -ArgumentList $arguments -Credential $credential -LoadUserProfile" +
      " -WorkingDirectory $env:SFS_SU_CWD -RedirectStandardOutput $env:SFS_SU_STDOUT -RedirectStandardError $env:SFS_SU_STDERR -Wait -PassThru",
    "exit $p.ExitCode",
  ].join("\n");
  const proc = Bun.spawn([POWERSHELL, "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-Command", launcher], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    windowsHide: true,
    env: {
      ...process.env,
      SFS_SU_NAME: user.name,
      SFS_SU_PASSWORD: user.password,
      SFS_SU_POWERSHELL: POWERSHELL,
      SFS_SU_SCRIPT: script,
      SFS_SU_REQUEST: requestFile,
      SFS_SU_CWD: dir,
      SFS_SU_STDOUT: stdoutFile,
      SFS_SU_STDERR: stderrFile,
    },
  });
  let launcherText = "";
  const exited = (async () => {
    const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    launcherText = `${out}${err}`;
    return code;
  })();
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  return { exited, output: () => ({ stdout: read(stdoutFile), stderr: `${read(stderrFile)}${launcherText}` }) };
}

export interface OpenProbe {
  id: string;
  kind: "pipe" | "file";
  path: string;
  access: "read" | "readwrite";
}

export interface ProbeReport {
  /** DOMAIN\name of the process that ran the probes. */
  user: string;
  /** Per probe id: CreateFileW's Win32 error (0 = opened) and a file's text when it opened. */
  results: Record<string, { error: number; text?: string }>;
}

/** Open each path as the second user with exactly the access asked for (fixtures/second-user/probe.ps1). */
export async function probeAsSecondUser(user: SecondUser, probes: OpenProbe[]): Promise<ProbeReport> {
  const run = startAsSecondUser(user, "probe.ps1", { probes });
  const code = await run.exited;
  const { stdout, stderr } = run.output();
  if (code !== 0) throw new Error(`probe.ps1 as ${user.name} exited ${code}: ${stderr}`);
  return JSON.parse(stdout.trim()) as ProbeReport;
}

/** The account part of DOMAIN\name. */
export const accountName = (qualified: string): string => qualified.slice(qualified.lastIndexOf("\\") + 1).toLowerCase();
