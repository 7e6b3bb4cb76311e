// The per-user Bridge token: 32 random bytes (64 hex characters) in a file only the user can read.
// On Windows it is the pipe's authentication (the pipe name is guessable); on POSIX it can serve
// as defence in depth next to the peer-uid check. The file is created atomically: written to a
// private temporary name, then hard-linked into place, so a reader never sees a partial token and
// two starters racing agree on one token.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isPlatformFailure, platformError } from "./errors.ts";
import { IS_WINDOWS } from "./os.ts";

export const TOKEN_FILE_NAME = "bridge.token";
const TOKEN_PATTERN = /^[0-9a-f]{64}$/;

function readToken(file: string): string {
  const stat = lstatSync(file);
  if (!stat.isFile()) throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token is not a regular file");
  if (!IS_WINDOWS) {
    if ((stat.mode & 0o077) !== 0) throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token is readable by others");
    if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
      throw platformError("STATE_DIRECTORY_UNSAFE", "the Bridge token belongs to another user");
    }
  }
  const token = readFileSync(file, "utf8").trim();
  if (!TOKEN_PATTERN.test(token)) throw platformError("BRIDGE_IDENTITY_UNAVAILABLE", "the Bridge token is malformed");
  return token;
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
  writeFileSync(temp, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  if (!IS_WINDOWS) chmodSync(temp, 0o600);
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
  try {
    return readToken(join(dir, TOKEN_FILE_NAME));
  } catch (err) {
    if (isPlatformFailure(err)) throw err;
    throw platformError("BRIDGE_IDENTITY_UNAVAILABLE", "the Bridge token cannot be read");
  }
}

/** Constant-time comparison of two tokens. */
export function tokensEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}
