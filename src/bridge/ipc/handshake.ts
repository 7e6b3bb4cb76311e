// Mutual authentication of a Bridge endpoint whose name anyone can compute (the Windows named pipe):
// both ends prove they hold the per-user Bridge token without sending it. Three lines, then the
// ordinary protocol:
//
//   server -> client  {"serverfs_handshake":"server_hello","version":1,"nonce":"<64 hex>"}
//   client -> server  {"serverfs_handshake":"client_proof","version":1,"nonce":"<64 hex>","proof":"<64 hex>"}
//   server -> client  {"serverfs_handshake":"server_proof","version":1,"proof":"<64 hex>"}
//
// client proof = HMAC-SHA256(token, CLIENT_DOMAIN || server nonce || client nonce)
// server proof = HMAC-SHA256(token, SERVER_DOMAIN || client nonce || server nonce)
//
// Both nonces are 32 fresh random bytes per connection, so a proof recorded from one session is
// worthless in the next, and the two domain separators (which carry the handshake version) keep a
// proof of one direction from being reflected as the other. Proofs are compared in constant time.
// The client sends its request only after the server proof checks out; a peer that says anything
// else, or says it out of turn, gets nothing more. Pure: no sockets here, the endpoints drive it.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { ServerfsError, isErrorCode } from "../../errors.ts";

export const HANDSHAKE_VERSION = 1;
/** Cap for one handshake line, newline excluded: the longest (client_proof) is 197 bytes. */
export const MAX_HANDSHAKE_LINE_BYTES = 512;
const NONCE_BYTES = 32;
const CLIENT_DOMAIN = Buffer.from(`serverfs-bridge-handshake-v${HANDSHAKE_VERSION}/client-proof\0`, "utf8");
const SERVER_DOMAIN = Buffer.from(`serverfs-bridge-handshake-v${HANDSHAKE_VERSION}/server-proof\0`, "utf8");
const HEX_32 = /^[0-9a-f]{64}$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

type Kind = "server_hello" | "client_proof" | "server_proof";
const FIELDS: Record<Kind, readonly string[]> = {
  server_hello: ["nonce", "serverfs_handshake", "version"],
  client_proof: ["nonce", "proof", "serverfs_handshake", "version"],
  server_proof: ["proof", "serverfs_handshake", "version"],
};

function mac(token: string, domain: Buffer, first: Buffer, second: Buffer): Buffer {
  return createHmac("sha256", Buffer.from(token, "utf8")).update(domain).update(first).update(second).digest();
}

export function clientProof(token: string, serverNonce: Buffer, clientNonce: Buffer): Buffer {
  return mac(token, CLIENT_DOMAIN, serverNonce, clientNonce);
}

export function serverProof(token: string, clientNonce: Buffer, serverNonce: Buffer): Buffer {
  return mac(token, SERVER_DOMAIN, clientNonce, serverNonce);
}

function sameProof(expected: Buffer, given: Buffer): boolean {
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function line(kind: Kind, fields: Record<string, string>): Uint8Array {
  return Buffer.from(`${JSON.stringify({ serverfs_handshake: kind, version: HANDSHAKE_VERSION, ...fields })}\n`, "utf8");
}

/** The hex fields of a handshake line of exactly this kind and version, or null for anything else. */
function parse(kind: Kind, bytes: Uint8Array): Record<string, Buffer> | null {
  if (bytes.byteLength > MAX_HANDSHAKE_LINE_BYTES) return null;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  const want = FIELDS[kind];
  if (keys.length !== want.length || keys.some((k, i) => k !== want[i])) return null;
  if (obj.serverfs_handshake !== kind || obj.version !== HANDSHAKE_VERSION) return null;
  const out: Record<string, Buffer> = {};
  for (const k of want) {
    if (k === "serverfs_handshake" || k === "version") continue;
    const v = obj[k];
    if (typeof v !== "string" || !HEX_32.test(v)) return null;
    out[k] = Buffer.from(v, "hex");
  }
  return out;
}

/** The server's half: a hello to send first, then one answer to the client's proof. */
export class ServerHandshake {
  private readonly nonce = randomBytes(NONCE_BYTES);
  /** The first line the server sends on a connection. */
  readonly hello: Uint8Array = line("server_hello", { nonce: this.nonce.toString("hex") });

  constructor(private readonly token: string) {}

  /** The server_proof line when `clientLine` is a valid proof of the token; null for anything else. */
  answer(clientLine: Uint8Array): Uint8Array | null {
    const msg = parse("client_proof", clientLine);
    if (msg === null) return null;
    if (!sameProof(clientProof(this.token, this.nonce, msg.nonce!), msg.proof!)) return null;
    return line("server_proof", { proof: serverProof(this.token, msg.nonce!, this.nonce).toString("hex") });
  }
}

/** Why the other end is not the Bridge; the message names what it did, never a secret. */
export function notAuthentic(what: string): ServerfsError {
  return new ServerfsError("BRIDGE_NOT_AUTHENTIC", `the Bridge endpoint ${what}; nothing was sent to it`);
}

/** The client's half: answers the hello, then checks the server's proof. Throws BRIDGE_NOT_AUTHENTIC. */
export class ClientHandshake {
  private readonly nonce = randomBytes(NONCE_BYTES);
  private serverNonce: Buffer | null = null;

  constructor(private readonly token: string) {}

  /** The client_proof line answering `helloLine`. */
  respond(helloLine: Uint8Array): Uint8Array {
    if (this.serverNonce !== null) throw notAuthentic("sent a second hello");
    const msg = parse("server_hello", helloLine);
    if (msg === null) throw notAuthentic(`did not open with the handshake (${describeLine(helloLine)})`);
    this.serverNonce = msg.nonce!;
    return line("client_proof", {
      nonce: this.nonce.toString("hex"),
      proof: clientProof(this.token, this.serverNonce, this.nonce).toString("hex"),
    });
  }

  /** Accepts only a server_proof line that proves the token for this session's two nonces. */
  confirm(proofLine: Uint8Array): void {
    if (this.serverNonce === null) throw notAuthentic("sent a proof before its hello");
    const msg = parse("server_proof", proofLine);
    if (msg === null) throw notAuthentic(`did not prove it holds the Bridge token (${describeLine(proofLine)})`);
    if (!sameProof(serverProof(this.token, this.nonce, this.serverNonce), msg.proof!)) {
      throw notAuthentic("answered with a wrong proof of the Bridge token");
    }
  }
}

/**
 * What an unexpected line was, for the error message: a connection-level refusal names its code
 * when it is one of ours (a real Bridge over its connection cap, or one that refused our proof
 * because it holds another token); anything else is described by kind, never echoed.
 */
function describeLine(bytes: Uint8Array): string {
  if (bytes.byteLength > MAX_HANDSHAKE_LINE_BYTES) return "an over-long line";
  try {
    const value = JSON.parse(utf8.decode(bytes)) as { ok?: unknown; error?: { code?: unknown } };
    const code = value?.ok === false ? value.error?.code : undefined;
    if (isErrorCode(code)) return `it answered ${code} instead`;
    return "it sent another message instead";
  } catch {
    return "it sent something that is not a handshake line";
  }
}
