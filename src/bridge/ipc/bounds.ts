// Resource bounds of the Bridge endpoint, in one place. They hold against every peer, our own uid
// included: a local process that opens sockets and never speaks, never finishes a line or never
// reads its replies must not freeze the Bridge or grow it. docs/agent-bridge.md lists them.
import { MAX_LINE_BYTES } from "./protocol.ts";

export interface SocketBounds {
  /** Connections open at once; the next one gets CONNECTION_LIMIT_REACHED and is closed. */
  maxConnections: number;
  /**
   * A connection with no request in flight and no traffic for this long is closed
   * (CONNECTION_IDLE_TIMEOUT). A request being answered (a long poll) never counts as idle; a reply
   * the peer does not read counts as idle from its last accepted byte.
   */
  idleTimeoutMs: number;
  /** A request line begun but not ended within this long closes the connection (REQUEST_LINE_TIMEOUT). */
  partialLineTimeoutMs: number;
  /**
   * Bytes one connection may hold for its peer: replies the kernel has not taken plus the requests
   * waiting behind them. Past it the connection is closed and its queue dropped (CONNECTION_QUEUE_FULL).
   */
  maxQueuedBytes: number;
}

export const DEFAULT_SOCKET_BOUNDS: Readonly<SocketBounds> = Object.freeze({
  maxConnections: 256,
  idleTimeoutMs: 30_000,
  partialLineTimeoutMs: 30_000,
  // Room for a full-size request waiting behind a full-size reply, twice over.
  maxQueuedBytes: 4 * 1_048_576,
});

/** Refused connections still lingering (so they read their refusal) beyond this many are cut at once. */
export const MAX_LINGERING_REFUSALS = 256;

/** Defaults with the given overrides; a non-positive or non-integer override is a programming error. */
export function socketBounds(over: Partial<SocketBounds> = {}): SocketBounds {
  const b = { ...DEFAULT_SOCKET_BOUNDS, ...over };
  for (const [k, v] of Object.entries(b)) {
    if (!Number.isSafeInteger(v) || v <= 0) throw new RangeError(`socket bound ${k} must be a positive integer`);
  }
  if (b.maxQueuedBytes < MAX_LINE_BYTES + 1) throw new RangeError("socket bound maxQueuedBytes must hold one full line");
  return b;
}
