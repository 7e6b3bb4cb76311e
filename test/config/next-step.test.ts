// Every configuration error names the next step, through the real CLI: an unreadable config says
// so and how to fix it (not "fix the named key": no key is involved), an unknown key gets "did you
// mean" when one declared key is close, type errors and relative paths are reported in one run,
// and the Bridge's provider env file error names the config file, the key, the env file and the
// line. Each case asserts the exit status and the exact line.
//
// The unreadable file is made real with permissions: as root (who reads every file) the CLI runs
// as uid/gid 65534 through setpriv, so the kernel refuses the read exactly as it would for an
// operator; as any other user the file is simply chmod 000.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { CLI_ARGV, runCli, type CliResult } from "../support/proc.ts";
import { cleanupTempDirs, tempDir } from "../support/temp.ts";

afterAll(cleanupTempDirs);

const q = (s: string) => JSON.stringify(s);
const isRoot = process.getuid?.() === 0;
const canDrop = isRoot && Bun.which("setpriv") !== null;
const permSkip = process.platform === "win32" ? "POSIX permissions" : isRoot && !canDrop ? "root without setpriv cannot be refused a read" : null;
if (permSkip) console.warn(`next-step: unreadable-config case skipped: ${permSkip}`);

/** The CLI as a user the file is not readable by. */
function cliUnprivileged(args: string[]): CliResult {
  const argv = canDrop ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ...CLI_ARGV, ...args] : [...CLI_ARGV, ...args];
  const p = Bun.spawnSync(argv, { stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

function lineOf(text: string, prefix: string): string | undefined {
  return text.split("\n").find((l) => l.startsWith(prefix));
}

describe("configuration errors name the next step", () => {
  test.skipIf(permSkip !== null)("an unreadable config: 'cannot read the file (permission denied)' and the fix, from render-config and doctor", () => {
    const dir = tempDir("sfs-next-");
    fs.chmodSync(dir, 0o755);
    const file = path.join(dir, "serverfs.toml");
    fs.writeFileSync(file, `[[workdirs]]\nalias = "a"\npath = ${q(dir)}\n`);
    fs.chmodSync(file, isRoot ? 0o600 : 0o000);
    const r = cliUnprivileged(["render-config", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`serverfs: render-config: CONFIGURATION_ERROR: ${file}: cannot read the file (permission denied); fix: make it readable by this user\n`);
    const d = cliUnprivileged(["doctor", "--config", file]);
    expect(d.code).toBe(2);
    expect(lineOf(d.stdout, "config:")).toBe(`config: FAIL -- CONFIGURATION_ERROR: ${file}: cannot read the file (permission denied); fix: make it readable by this user`);
  });

  test("a syntax error is about the file, not a key: doctor's fix says so", () => {
    const dir = tempDir("sfs-next-");
    const file = path.join(dir, "serverfs.toml");
    fs.writeFileSync(file, `[[workdirs]]\nalias = "a"\npath = \n`);
    const d = runCli(["doctor", "--config", file]);
    expect(d.code).toBe(2);
    expect(lineOf(d.stdout, "config:")).toBe(
      `config: FAIL -- CONFIGURATION_ERROR: ${file}: invalid TOML at line 3, column 8; fix: correct the file where the message says and run doctor again`,
    );
  });

  test("unknown keys get 'did you mean' when one declared key is close, in both formats; a far-off key does not (problems in the schema's order)", () => {
    const dir = tempDir("sfs-next-");
    const file = path.join(dir, "serverfs.toml");
    fs.writeFileSync(file, `[server]\nlog_levle = "INFO"\n\n[[workdirs]]\nalias = "a"\npath = ${q(dir)}\nreadonly = true\nzzzzzz = 1\n`);
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      [
        `serverfs: render-config: CONFIGURATION_ERROR: ${file}: workdirs[0].readonly: unknown key (did you mean 'read_only'?)`,
        `serverfs: render-config: CONFIGURATION_ERROR: ${file}: workdirs[0].zzzzzz: unknown key`,
        `serverfs: render-config: CONFIGURATION_ERROR: ${file}: server.log_levle: unknown key (did you mean 'log_level'?)`,
        "",
      ].join("\n"),
    );
    const envFile = path.join(dir, "serverfs.env");
    fs.writeFileSync(envFile, `WORKDIR_01_ALIAS=a\nWORKDIR_01_PATH=${dir}\nWORKDIR_01_READONLY=true\nSERVERFS_LOG_LEVL=INFO\n`);
    const e = runCli(["render-config", "--env-file", envFile]);
    expect(e.code).toBe(2);
    expect(e.stderr).toBe(
      [
        `serverfs: render-config: CONFIGURATION_ERROR: ${envFile}: WORKDIR_01_READONLY: unknown key (did you mean 'WORKDIR_01_READ_ONLY'?)`,
        `serverfs: render-config: CONFIGURATION_ERROR: ${envFile}: SERVERFS_LOG_LEVL: unknown key (did you mean 'SERVERFS_LOG_LEVEL'?)`,
        "",
      ].join("\n"),
    );
  });

  test("type errors and relative paths are reported in one run", () => {
    const dir = tempDir("sfs-next-");
    const file = path.join(dir, "serverfs.toml");
    fs.writeFileSync(file, `[server]\nstate_dir = "state"\n\n[[workdirs]]\nalias = "a"\npath = "docs"\nread_only = "false"\n`);
    const r = runCli(["render-config", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      [
        `serverfs: render-config: CONFIGURATION_ERROR: ${file}: workdirs[0].read_only: expected a boolean (true or false), got a string`,
        `serverfs: render-config: CONFIGURATION_ERROR: ${file}: server.state_dir: must be an absolute path (/…, X:\\…, \\\\server\\share or \\\\?\\…)`,
        `serverfs: render-config: CONFIGURATION_ERROR: ${file}: workdirs[0].path: must be an absolute path (/…, X:\\…, \\\\server\\share or \\\\?\\…)`,
        "",
      ].join("\n"),
    );
  });

  test("the Bridge's provider env file: the config file, the key, the env file and the line, with the fix", () => {
    const dir = tempDir("sfs-next-");
    fs.mkdirSync(path.join(dir, "repo"));
    const envFile = path.join(dir, "provider.env");
    fs.writeFileSync(envFile, "# provider settings\nOPENAI_BASE_URL=http://127.0.0.1:9\nthis line has no equals sign\n", { mode: 0o600 });
    const file = path.join(dir, "serverfs.toml");
    fs.writeFileSync(
      file,
      `[server]\nstate_dir = ${q(path.join(dir, "state"))}\n\n[[workdirs]]\nalias = "repo"\npath = ${q(path.join(dir, "repo"))}\n\n` +
        `[agent]\nenabled = true\nenable_fake_runtime = true\nprovider_env_file = ${q(envFile)}\n`,
    );
    const r = runCli(["bridge", "--config", file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `serverfs: bridge: CONFIGURATION_ERROR: ${file}: agent.provider_env_file (${envFile}): line 3 of the provider env file is not KEY=VALUE; fix: write each line as KEY=VALUE, or make it a # comment\n`,
    );
    expect(fs.existsSync(path.join(dir, "state"))).toBe(false);
    fs.chmodSync(envFile, 0o644);
    const loose = runCli(["bridge", "--config", file]);
    expect(loose.code).toBe(2);
    expect(loose.stderr).toBe(
      `serverfs: bridge: CONFIGURATION_ERROR: ${file}: agent.provider_env_file (${envFile}): the provider env file must be a 0600 regular file owned by this user; fix: chmod 600 it and give it to this user\n`,
    );
    fs.rmSync(envFile);
    const missing = runCli(["bridge", "--config", file]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      `serverfs: bridge: CONFIGURATION_ERROR: ${file}: agent.provider_env_file (${envFile}): the provider env file does not exist; fix: create it (KEY=VALUE lines, mode 0600), or correct the key\n`,
    );
  }, 60_000);
});
