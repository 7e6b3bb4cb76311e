// A connection's protocol era, fixed by the first message serve accepts and final from then on.
// The SDK's stdio entry treats a `server/discover` opening as an optimistic probe: one claim-less
// message after it discarded the 2026 instance and turned the connection into a 2025 one, after
// which `initialize` was accepted and `server/discover` refused. Here every message is judged
// against the era its connection opened in, before the SDK sees it, and a message of the other
// era is refused (a request) or dropped (a notification); the SDK's own switch is never reached.
import {
  CLIENT_CAPABILITIES_META_KEY,
  type JSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import type { WireError } from "./wire.ts";

/** The one 2026-era revision serve speaks. */
export const MODERN_REVISION = "2026-07-28";

export type Era = "2025" | typeof MODERN_REVISION;

export type EraVerdict =
  | { kind: "pass" }
  | { kind: "refuse"; reply: WireError }
  | { kind: "drop"; reason: "wrong_era" };

/** Longest requested version echoed back in an error's `data` (it is caller input). */
const MAX_ECHOED_VERSION = 64;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function metaOf(message: JSONRPCMessage): Record<string, unknown> | undefined {
  const params = (message as { params?: unknown }).params;
  if (!isPlainObject(params)) return undefined;
  return isPlainObject(params._meta) ? params._meta : undefined;
}

/**
 * The era a request or notification is written in: the 2026 per-request envelope is claimed by the
 * protocol-version key in `params._meta` (the SDK's own rule); everything without it is 2025-era
 * traffic, `initialize` included.
 */
export function eraOf(message: JSONRPCMessage): Era {
  const meta = metaOf(message);
  return meta !== undefined && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY) ? MODERN_REVISION : "2025";
}

/**
 * Whether a 2026 claim is one the SDK will serve, so that it opens the connection: the revision is
 * ours and the required capabilities are there. A claim refused for its envelope or its revision
 * opens nothing, so a client can still correct it or fall back to `initialize`.
 */
function opensModern(message: JSONRPCMessage): boolean {
  const meta = metaOf(message);
  return meta?.[PROTOCOL_VERSION_META_KEY] === MODERN_REVISION && isPlainObject(meta[CLIENT_CAPABILITIES_META_KEY]);
}

function echoed(v: unknown): string | undefined {
  return typeof v === "string" && v.length <= MAX_ECHOED_VERSION ? v : undefined;
}

function reply(id: string | number, code: number, message: string, data?: Record<string, unknown>): EraVerdict {
  return { kind: "refuse", reply: { jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } } };
}

export class EraLock {
  private fixed: Era | undefined;
  /** A 2025 `initialize` was handed on: the protocol version is negotiated once per connection. */
  private initialized = false;

  /** The connection's era, once its first message was accepted. */
  get era(): Era | undefined {
    return this.fixed;
  }

  /** Judge one message that passed the wire gate; the first acceptable one fixes the era. */
  admit(message: JSONRPCMessage): EraVerdict {
    if (!("method" in message)) return { kind: "pass" }; // a response carries no era
    const era = eraOf(message);
    if (this.fixed === undefined) {
      if (era === "2025" || opensModern(message)) this.fixed = era;
      if (era === "2025" && message.method === "initialize") this.initialized = true;
      return { kind: "pass" };
    }
    if (era === this.fixed && era === "2025" && message.method === "initialize" && "id" in message) {
      if (this.initialized) {
        return reply(message.id as string | number, ProtocolErrorCode.InvalidRequest, "Invalid request: this connection is already initialized; initialize opens a 2025 connection once");
      }
      this.initialized = true;
    }
    if (era === this.fixed) return { kind: "pass" };
    if (!("id" in message)) return { kind: "drop", reason: "wrong_era" };
    const id = message.id as string | number;
    if (this.fixed === MODERN_REVISION) {
      if (message.method === "initialize") {
        const requested = echoed((message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion);
        return reply(
          id,
          ProtocolErrorCode.UnsupportedProtocolVersion,
          `Unsupported protocol version: this connection speaks ${MODERN_REVISION}, fixed by its first message; a 2025 initialize needs a new connection`,
          { supported: [MODERN_REVISION], ...(requested ? { requested } : {}) },
        );
      }
      return reply(
        id,
        ProtocolErrorCode.InvalidParams,
        `Invalid params: this connection speaks ${MODERN_REVISION}, fixed by its first message; every request needs the _meta envelope (${PROTOCOL_VERSION_META_KEY})`,
      );
    }
    const requested = echoed(metaOf(message)?.[PROTOCOL_VERSION_META_KEY]);
    return reply(
      id,
      ProtocolErrorCode.UnsupportedProtocolVersion,
      `Unsupported protocol version: this connection speaks the 2025 era, fixed by its first message; a ${MODERN_REVISION} request needs a new connection`,
      { supported: [...SUPPORTED_PROTOCOL_VERSIONS], ...(requested ? { requested } : {}) },
    );
  }
}
