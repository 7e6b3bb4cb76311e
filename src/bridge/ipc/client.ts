// The one Bridge client, used by `serve`'s agent tools, `serverfs tasks` and `service status`.
// One request per connection, a per-call timeout, and strict validation of the reply: a Bridge
// that is down is AGENT_BRIDGE_UNAVAILABLE, a confused one is AGENT_BRIDGE_PROTOCOL_ERROR.
import net from "node:net";
import { randomBytes } from "node:crypto";
import { ServerfsError } from "../../errors.ts";
import {
  LineDecoder,
  MAX_LINE_BYTES,
  PROTOCOL_VERSION,
  encodeRequest,
  failureToError,
  parseResponseLine,
} from "./protocol.ts";
import type { BridgeMethod, Params, Result } from "../rpc/methods.ts";

export interface BridgeEndpoint {
  /** Unix socket path, or a Windows named pipe path. */
  path: string;
  /** Windows only: the per-user token presented before the first request. */
  pipeToken?: string | null;
}

export interface CallOptions {
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export function newRequestId(): string {
  return `mcp_${randomBytes(12).toString("hex")}`;
}

/**
 * The typed client: method names, params and results come from the Bridge method table
 * (src/bridge/rpc/methods.ts), so a caller cannot misspell a method or a parameter.
 */
export class BridgeClient {
  private readonly raw: RawBridgeClient;

  constructor(
    readonly endpoint: BridgeEndpoint,
    readonly defaultTimeoutMs: number = DEFAULT_TIMEOUT_MS,
  ) {
    this.raw = new RawBridgeClient(endpoint, defaultTimeoutMs);
  }

  /** One RPC. Resolves with the result or throws the Bridge's coded error. */
  call<M extends BridgeMethod>(method: M, params: Params<M>, opts: CallOptions = {}): Promise<Result<M>> {
    // The reply is checked as a protocol envelope, not per method: both ends are this program.
    return this.raw.call(method, params, opts) as Promise<Result<M>>;
  }
}

/**
 * The same round trip with no method table: any method name, any params object. For probing the
 * protocol itself (unknown methods, wrong types, foreign servers), never for product callers.
 */
export class RawBridgeClient {
  constructor(
    readonly endpoint: BridgeEndpoint,
    readonly defaultTimeoutMs: number = DEFAULT_TIMEOUT_MS,
  ) {}

  /** One RPC. Resolves with the result object or throws the Bridge's coded error. */
  call(method: string, params: Record<string, unknown>, opts: CallOptions = {}): Promise<Record<string, unknown>> {
    const timeoutMs = opts.timeoutMs ?? this.defaultTimeoutMs;
    const requestId = newRequestId();
    const frame = encodeRequest({ protocol_version: PROTOCOL_VERSION, request_id: requestId, method, params });
    if (frame.byteLength > MAX_LINE_BYTES + 1) {
      return Promise.reject(new ServerfsError("REQUEST_TOO_LARGE", "request exceeds the 1 MiB line limit"));
    }
    return new Promise((resolve, reject) => {
      const socket = net.connect({ path: this.endpoint.path });
      const decoder = new LineDecoder(MAX_LINE_BYTES);
      let settled = false;
      let connected = false;
      const finish = (err: ServerfsError | null, value?: Record<string, unknown>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners("data");
        socket.on("error", () => {});
        socket.destroy();
        if (err) reject(err);
        else resolve(value!);
      };
      const timer = setTimeout(
        () =>
          finish(
            new ServerfsError(
              "AGENT_BRIDGE_UNAVAILABLE",
              connected ? "Agent Bridge did not answer in time" : "Agent Bridge is not reachable",
            ),
          ),
        timeoutMs,
      );
      socket.once("connect", () => {
        connected = true;
        if (this.endpoint.pipeToken) socket.write(`${JSON.stringify({ serverfs_pipe_token: this.endpoint.pipeToken })}\n`);
        socket.write(frame);
      });
      socket.on("data", (chunk: Buffer) => {
        const lines = decoder.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if (decoder.overflow) return finish(new ServerfsError("AGENT_BRIDGE_PROTOCOL_ERROR", "Bridge reply too large"));
        const line = lines[0];
        if (!line) return;
        try {
          const reply = parseResponseLine(line, requestId);
          if (reply.ok) finish(null, reply.result);
          else finish(failureToError(reply));
        } catch (err) {
          finish(err as ServerfsError);
        }
      });
      socket.once("error", () =>
        finish(new ServerfsError("AGENT_BRIDGE_UNAVAILABLE", "Agent Bridge is not reachable")),
      );
      socket.once("close", () =>
        finish(
          new ServerfsError(
            connected ? "AGENT_BRIDGE_PROTOCOL_ERROR" : "AGENT_BRIDGE_UNAVAILABLE",
            connected ? "Bridge closed the connection without a reply" : "Agent Bridge is not reachable",
          ),
        ),
      );
    });
  }
}
