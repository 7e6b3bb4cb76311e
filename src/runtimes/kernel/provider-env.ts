// The environment every provider child starts from: the Bridge's own environment without Bun's
// control variables and serverfs internals (platform scrubEnv), plus the operator's private
// provider env file (`KEY=VALUE` per line, verbatim value, `#` comments, no expansion).
import fs from "node:fs";
import { errnoCode, ServerfsError } from "../../errors.ts";
import { scrubEnv } from "../../../platform/index.ts";
import { IS_WINDOWS } from "../../../platform/os.ts";

/**
 * POSIX owner and mode bits as the check that a secret file is private to this user. Windows has
 * neither: Bun synthesises `mode` there (0666, or 0444 when read-only) and access is the file's
 * DACL, so on Windows only the regular-file check applies, as for the Bridge token (and as
 * `serverfs doctor` reports: "ACLs not measured on Windows").
 */
export function privateToUser(st: fs.Stats): boolean {
  if (IS_WINDOWS) return true;
  return (!process.getuid || st.uid === process.getuid()) && (st.mode & 0o077) === 0;
}

/**
 * The file's `KEY=VALUE` lines. Errors name the configuration key (`key`, default the TOML name)
 * and the line, never the file's path or a value: they can reach an MCP answer through a task.
 * The Bridge's start checks the file first and names its path on stderr (commands/bridge.ts).
 */
export function readProviderEnvFile(file: string, key = "agent.provider_env_file"): Record<string, string> {
  const fail = (reason: string) => new ServerfsError("CONFIGURATION_ERROR", `${key}: ${reason}`, { key, reason });
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw fail("the provider env file does not exist; fix: create it (KEY=VALUE lines, mode 0600), or correct the key");
    if (code === "EACCES" || code === "EPERM") throw fail("the provider env file cannot be read (permission denied); fix: make it readable by this user");
    if (code === "ELOOP") throw fail("the provider env file is a symlink; fix: point the key at the file itself");
    throw fail(`the provider env file cannot be opened (${code ?? "error"}); fix: check the file and its filesystem`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || !privateToUser(st)) {
      throw fail("the provider env file must be a 0600 regular file owned by this user; fix: chmod 600 it and give it to this user");
    }
    const out: Record<string, string> = {};
    const lines = fs.readFileSync(fd, "utf8").split("\n");
    for (const [i, raw] of lines.entries()) {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
      const eq = line.indexOf("=");
      if (eq <= 0) throw fail(`line ${i + 1} of the provider env file is not KEY=VALUE; fix: write each line as KEY=VALUE, or make it a # comment`);
      out[line.slice(0, eq)] = line.slice(eq + 1);
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The Bridge's start: the same read, its error naming the configuration file, the key and the
 * provider env file's own path (the operator's terminal or service log, never an MCP answer).
 */
export function checkProviderEnvFileAtStart(providerEnvFile: string | null, key: string, configFile: string): void {
  if (providerEnvFile === null) return;
  try {
    readProviderEnvFile(providerEnvFile, key);
  } catch (err) {
    const reason = err instanceof ServerfsError ? err.details?.reason : undefined;
    if (typeof reason === "string") throw new ServerfsError("CONFIGURATION_ERROR", `${configFile}: ${key} (${providerEnvFile}): ${reason}`);
    throw err;
  }
}

export interface ProviderEnvironment {
  env: Record<string, string>;
  /** Values from the private env file: credentials that must never be echoed back to a caller. */
  secrets: string[];
}

export function providerEnvironment(providerEnvFile: string | null): ProviderEnvironment {
  const base = scrubEnv(process.env);
  if (!providerEnvFile) return { env: base, secrets: [] };
  const file = scrubEnv(readProviderEnvFile(providerEnvFile));
  return { env: { ...base, ...file }, secrets: Object.values(file).filter((v) => v.length >= 8) };
}
