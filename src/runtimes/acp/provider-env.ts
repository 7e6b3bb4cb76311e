// The Bridge's private provider environment file: one `KEY=VALUE` per line, the value taken
// verbatim to the end of the line, `#` comment lines and blank lines ignored, nothing expanded.
// It holds provider credentials, so it must be private to the user before a byte of it is used,
// and neither its path nor its contents ever appear in an error.
import * as fs from "node:fs";
import { ServerfsError } from "../../errors.ts";

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A provider env file is small by nature; a huge one is a mistake, not configuration. */
export const MAX_PROVIDER_ENV_BYTES = 256 * 1024;

function refuse(why: string): never {
  throw new ServerfsError("AGENT_ACP_LAUNCH_FAILED", `provider environment file ${why}`);
}

export function parseProviderEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const eq = line.indexOf("=");
    const name = eq > 0 ? line.slice(0, eq) : "";
    if (!NAME.test(name)) refuse(`line ${i + 1} is not KEY=VALUE`);
    const value = line.slice(eq + 1);
    if (value.includes("\0")) refuse(`line ${i + 1} contains a NUL byte`);
    out[name] = value;
  }
  return out;
}

/** Read and parse the file, refusing anything not a private regular file owned by this user. */
export function readProviderEnvFile(file: string): Record<string, string> {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch {
    refuse("cannot be opened (missing, or a symlink)");
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) refuse("is not a regular file");
    if (process.platform !== "win32") {
      if ((st.mode & 0o077) !== 0) refuse("must have mode 0600");
      if (typeof process.getuid === "function" && st.uid !== process.getuid()) refuse("must be owned by the Bridge user");
    }
    if (st.size > MAX_PROVIDER_ENV_BYTES) refuse(`is larger than ${MAX_PROVIDER_ENV_BYTES} bytes`);
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = fs.readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return parseProviderEnv(buf.subarray(0, off).toString("utf8"));
  } finally {
    fs.closeSync(fd);
  }
}
