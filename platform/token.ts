// The per-user Bridge token: 32 random bytes (64 hex characters) in a file only the user can read.
// On Windows it is the pipe's authentication (the pipe name is computable by anyone): both ends
// prove they hold it, without sending it (src/bridge/ipc/handshake.ts). On POSIX it can serve as
// defence in depth next to the peer-uid check. The file is created atomically: made private while
// still empty under a temporary name, filled, then hard-linked into place, so a reader never sees a
// partial token and two starters racing agree on one token. Reading it checks that it is private:
// the owner and mode bits on POSIX, the owner and DACL on Windows (no mode bits exist there).
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, closeSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isPlatformFailure, platformError } from "./errors.ts";
import { IS_WINDOWS } from "./os.ts";
import { fileSecuritySddl, setFileDacl } from "./windows/file-security.ts";
import { currentUserSid } from "./windows/pipe.ts";
import { privateFileProblem } from "./windows/private-sddl.ts";

export const TOKEN_FILE_NAME = "bridge.token";
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

/**
 * The DACL a new token file gets on Windows: the user may do everything, nobody else anything.
 * The trailing deny entry changes nothing on Windows (the user's access is granted by the first
 * entry before it is reached) but is what makes Wine, which stores a DACL as Unix mode bits and
 * otherwise keeps the old "other" bits, drop them (measured with Wine 8.0).
 */
export function tokenFileSddl(userSid: string): string {
  return `D:P(A;;FA;;;${userSid})(D;;FA;;;WD)`;
}

function checkWindowsPrivacy(file: string): void {
  const sddl = fileSecuritySddl(file);
  if (sddl === null) throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token's owner and access list cannot be read");
  const problem = privateFileProblem(sddl, currentUserSid());
  if (problem !== null) throw platformError("STATE_DIRECTORY_UNSAFE", `the Bridge token is not private: ${problem}`);
}

function readToken(file: string): string {
  const stat = lstatSync(file);
  if (!stat.isFile()) throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token is not a regular file");
  if (IS_WINDOWS) checkWindowsPrivacy(file);
  else {
    if ((stat.mode & 0o077) !== 0) throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token is readable by others");
    if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
      throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token belongs to another user");
    }
  }
  const token = readFileSync(file, "utf8").trim();
  if (!TOKEN_PATTERN.test(token)) throw platformError("BRIDGE_IDENTITY_UNAVAILABLE", "the Bridge token is malformed");
  return token;
}

/** A new, still empty file only the user can open; the token is written after that. */
function createPrivateTemp(temp: string): number {
  const fd = openSync(temp, "wx", 0o600);
  if (!IS_WINDOWS) {
    chmodSync(temp, 0o600);
    return fd;
  }
  let restricted = false;
  try {
    restricted = setFileDacl(temp, tokenFileSddl(currentUserSid()));
  } finally {
    if (!restricted) {
      closeSync(fd);
      unlinkSync(temp);
    }
  }
  if (!restricted) throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token could not be made private");
  return fd;
}

/** Read the token in `dir`, creating it (and `dir`, 0700) when missing. */
export function ensureBridgeToken(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, TOKEN_FILE_NAME);
  try {
    return readToken(file);
  } catch (err) {
    if ((err as { code?: unknown })?.code !== "ENOENT") throw err;
  }
  const temp = join(dir, `.${TOKEN_FILE_NAME}.${process.pid}.${randomBytes(6).toString("hex")}`);
  const fd = createPrivateTemp(temp);
  try {
    writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file);
  } catch (err) {
    if ((err as { code?: unknown })?.code !== "EEXIST") {
      unlinkSync(temp);
      throw platformError("IO_ERROR", "the Bridge token could not be written");
    }
  }
  unlinkSync(temp);
  return readToken(file);
}

/** Read an existing token; a client never creates one. */
export function readBridgeToken(dir: string): string {
  const token = readBridgeTokenIfPresent(dir);
  if (token === null) throw platformError("BRIDGE_IDENTITY_UNAVAILABLE", "the Bridge token cannot be read");
  return token;
}

/** The existing token, or null when there is no token file (no Bridge has started here yet). */
export function readBridgeTokenIfPresent(dir: string): string | null {
  try {
    return readToken(join(dir, TOKEN_FILE_NAME));
  } catch (err) {
    if (isPlatformFailure(err)) throw err;
    if ((err as { code?: unknown })?.code === "ENOENT") return null;
    throw platformError("BRIDGE_IDENTITY_UNAVAILABLE", "the Bridge token cannot be read");
  }
}

/** Constant-time comparison of two tokens. */
export function tokensEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}
