// Bridge RPC protocol v1: newline-delimited JSON, one request per line, strict envelopes.
// Shared by the server, the client and tests so both ends agree on every byte rule.
import { ServerfsError, isErrorCode, type ErrorCode } from "../../errors.ts";

export const PROTOCOL_VERSION = 1;
/** Cap for one request line and one response line, newline excluded. */
export const MAX_LINE_BYTES = 1_048_576;

const REQUEST_KEYS = ["method", "params", "protocol_version", "request_id"];

export interface RpcRequest {
  protocol_version: 1;
  request_id: string;
  method: string;
  params: Record<string, unknown>;
}

export interface RpcSuccess {
  request_id: string;
  ok: true;
  result: Record<string, unknown>;
}

export interface RpcFailure {
  request_id: string | null;
  ok: false;
  error: { code: string; message: string };
}

export type RpcResponse = RpcSuccess | RpcFailure;

const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sameKeys(obj: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(obj).sort();
  return own.length === keys.length && own.every((k, i) => k === keys[i]);
}

/** A request that failed envelope checks, with whatever request id could be trusted. */
export class EnvelopeError extends ServerfsError {
  readonly requestId: string | null;
  constructor(code: ErrorCode, message: string, requestId: string | null) {
    super(code, message);
    this.requestId = requestId;
  }
}

/**
 * Decode and validate one request line (bytes without the newline). Invalid UTF-8, invalid JSON
 * (NaN/Infinity are not JSON), a wrong key set or wrong types are INVALID_REQUEST; a version other
 * than 1 is PROTOCOL_VERSION_UNSUPPORTED.
 */
export function parseRequestLine(line: Uint8Array): RpcRequest {
  let text: string;
  try {
    text = utf8.decode(line);
  } catch {
    throw new EnvelopeError("INVALID_REQUEST", "request is not valid UTF-8", null);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new EnvelopeError("INVALID_REQUEST", "request is not valid JSON", null);
  }
  if (!isPlainObject(value)) throw new EnvelopeError("INVALID_REQUEST", "request must be a JSON object", null);
  const rid = value.request_id;
  const trustedId = typeof rid === "string" && rid.length > 0 && rid.length <= 256 ? rid : null;
  if (!sameKeys(value, REQUEST_KEYS)) {
    throw new EnvelopeError(
      "INVALID_REQUEST",
      "request must have exactly the keys protocol_version, request_id, method, params",
      trustedId,
    );
  }
  if (typeof value.protocol_version !== "number" || !Number.isInteger(value.protocol_version)) {
    throw new EnvelopeError("INVALID_REQUEST", "protocol_version must be an integer", trustedId);
  }
  if (trustedId === null) throw new EnvelopeError("INVALID_REQUEST", "request_id must be a non-empty string", null);
  if (typeof value.method !== "string" || value.method.length === 0) {
    throw new EnvelopeError("INVALID_REQUEST", "method must be a non-empty string", trustedId);
  }
  if (!isPlainObject(value.params)) throw new EnvelopeError("INVALID_REQUEST", "params must be an object", trustedId);
  if (value.protocol_version !== PROTOCOL_VERSION) {
    throw new EnvelopeError(
      "PROTOCOL_VERSION_UNSUPPORTED",
      `protocol_version ${value.protocol_version} is not supported (expected 1)`,
      trustedId,
    );
  }
  return value as unknown as RpcRequest;
}

export function failure(requestId: string | null, code: string, message: string): RpcFailure {
  return { request_id: requestId, ok: false, error: { code, message } };
}

/**
 * Serialize a response as one line (with the newline). A response over the cap is replaced by a
 * RESPONSE_TOO_LARGE failure for the same request id, so the caller learns what happened.
 */
export function encodeResponse(response: RpcResponse): Uint8Array {
  let body = encoder.encode(JSON.stringify(response));
  if (body.byteLength > MAX_LINE_BYTES) {
    body = encoder.encode(
      JSON.stringify(failure(response.request_id, "RESPONSE_TOO_LARGE", "response exceeds the 1 MiB line limit")),
    );
  }
  const out = new Uint8Array(body.byteLength + 1);
  out.set(body, 0);
  out[body.byteLength] = 0x0a;
  return out;
}

export function encodeRequest(request: RpcRequest): Uint8Array {
  return encoder.encode(`${JSON.stringify(request)}\n`);
}

/**
 * Validate a response line against the request it answers. Anything unexpected is
 * AGENT_BRIDGE_PROTOCOL_ERROR: a confused Bridge must never look like a successful call.
 */
export function parseResponseLine(line: Uint8Array, expectedId: string): RpcResponse {
  const bad = (why: string) => new ServerfsError("AGENT_BRIDGE_PROTOCOL_ERROR", `malformed Bridge reply: ${why}`);
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(line));
  } catch {
    throw bad("not UTF-8 JSON");
  }
  if (!isPlainObject(value)) throw bad("not an object");
  if (typeof value.ok !== "boolean") throw bad("ok is not a boolean");
  if (value.ok) {
    if (!sameKeys(value, ["ok", "request_id", "result"])) throw bad("unexpected keys");
    if (value.request_id !== expectedId) throw bad("request_id mismatch");
    if (!isPlainObject(value.result)) throw bad("result is not an object");
    return value as unknown as RpcSuccess;
  }
  if (!sameKeys(value, ["error", "ok", "request_id"])) throw bad("unexpected keys");
  if (value.request_id !== expectedId && value.request_id !== null) throw bad("request_id mismatch");
  const err = value.error;
  if (!isPlainObject(err) || !sameKeys(err, ["code", "message"])) throw bad("error has unexpected keys");
  if (typeof err.code !== "string" || err.code.length === 0 || typeof err.message !== "string") {
    throw bad("error code/message invalid");
  }
  return value as unknown as RpcFailure;
}

/** Turn a failure reply into the ServerfsError the caller sees (unknown codes stay protocol errors). */
export function failureToError(f: RpcFailure): ServerfsError {
  const code = f.error.code;
  if (!isErrorCode(code)) {
    return new ServerfsError("AGENT_BRIDGE_PROTOCOL_ERROR", "Bridge replied with an unknown error code");
  }
  return new ServerfsError(code, f.error.message);
}

/**
 * Splits a byte stream into lines with a hard cap. `push` returns complete lines; an
 * over-long line (complete or not) raises `overflow` so the connection can be closed.
 */
export class LineDecoder {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  overflow = false;

  constructor(private readonly maxBytes: number = MAX_LINE_BYTES) {}

  /** Bytes of a line begun but not yet ended. */
  get partialBytes(): number {
    return this.buffered;
  }

  /** Drop whatever is buffered (a closed connection hands its memory back). */
  reset(): void {
    this.chunks = [];
    this.buffered = 0;
  }

  push(data: Uint8Array): Uint8Array[] {
    const lines: Uint8Array[] = [];
    let start = 0;
    for (;;) {
      const nl = data.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = data.subarray(start, nl);
      if (this.buffered + piece.byteLength > this.maxBytes) {
        this.overflow = true;
        return lines;
      }
      lines.push(this.take(piece));
      start = nl + 1;
    }
    const rest = data.subarray(start);
    if (rest.byteLength > 0) {
      if (this.buffered + rest.byteLength > this.maxBytes) {
        this.overflow = true;
        return lines;
      }
      this.chunks.push(rest.slice());
      this.buffered += rest.byteLength;
    }
    return lines;
  }

  private take(tail: Uint8Array): Uint8Array {
    if (this.chunks.length === 0) return tail.slice();
    const out = new Uint8Array(this.buffered + tail.byteLength);
    let off = 0;
    for (const c of this.chunks) {
      out.set(c, off);
      off += c.byteLength;
    }
    out.set(tail, off);
    this.chunks = [];
    this.buffered = 0;
    return out;
  }
}
