// The environment every provider child starts from: the Bridge's own environment without Bun's
// control variables and serverfs internals (platform scrubEnv), plus the operator's private
// provider env file (`KEY=VALUE` per line, verbatim value, `#` comments, no expansion).
import fs from "node:fs";
import { ServerfsError } from "../errors.ts";
import { scrubEnv } from "../../platform/index.ts";
import { IS_WINDOWS } from "../../platform/os.ts";

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

export function readProviderEnvFile(file: string): Record<string, string> {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch {
    throw new ServerfsError("CONFIGURATION_ERROR", "provider_env_file cannot be opened");
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || !privateToUser(st)) {
      throw new ServerfsError("CONFIGURATION_ERROR", "provider_env_file must be a 0600 regular file owned by this user");
    }
    const out: Record<string, string> = {};
    for (const raw of fs.readFileSync(fd, "utf8").split("\n")) {
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
      const eq = line.indexOf("=");
      if (eq <= 0) throw new ServerfsError("CONFIGURATION_ERROR", "provider_env_file has a line without KEY=VALUE");
      out[line.slice(0, eq)] = line.slice(eq + 1);
    }
    return out;
  } finally {
    fs.closeSync(fd);
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
