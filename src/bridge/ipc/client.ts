// The one Bridge client, used by `serve`'s agent tools, `serverfs tasks` and `service status`.
// One request per connection, a per-call timeout, and strict validation of the reply: a Bridge
// that is down is AGENT_BRIDGE_UNAVAILABLE, a confused one is AGENT_BRIDGE_PROTOCOL_ERROR. On an
// endpoint with a token (the Windows pipe) the server must first prove it holds the token
// (./handshake.ts); one that does not is BRIDGE_NOT_AUTHENTIC and is sent nothing but our proof.
import { randomBytes } from "node:crypto";
import { ServerfsError, toServerfsError } from "../../errors.ts";
import { ClientHandshake, MAX_HANDSHAKE_LINE_BYTES, notAuthentic } from "./handshake.ts";
import {
  LineDecoder,
  MAX_LINE_BYTES,
  PROTOCOL_VERSION,
  encodeRequest,
  failureToError,
  parseResponseLine,
} from "./protocol.ts";
import type { BridgeMethod, Params, Result } from "../rpc/methods.ts";
import { connectLocal } from "../../../platform/local-stream.ts";
import type { LocalStream } from "../../../platform/types.ts";
import { bridgeStartHint } from "./start-hint.ts";

/** Every pipe instance was taken at that moment; the Bridge adds one per client it takes. */
const BUSY_RETRY_MS = 20;

/** A stream takes what it can now; the rest of a frame waits here for its drain. */
class StreamWriter {
  private queue: Uint8Array[] = [];

  constructor(private readonly stream: LocalStream) {}

  send(bytes: Uint8Array): void {
    this.queue.push(bytes);
    this.flush();
  }

  flush(): void {
    while (this.queue.length > 0 && !this.stream.closed) {
      const head = this.queue[0]!;
      const n = this.stream.write(head);
      if (n <= 0) return;
      if (n < head.byteLength) this.queue[0] = head.subarray(n);
      else this.queue.shift();
    }
  }
}

export interface BridgeEndpoint {
  /** Unix socket path, or a Windows named pipe path. */
  path: string;
  /**
   * Windows only: the per-user token both ends prove they hold before the first request, or how to
   * read it (per call, so a Bridge started after this client is still reached; it throws the token
   * file's coded error). Absent or null: no handshake (the unix socket, where the kernel-measured
   * peer uid and the private socket directory authenticate instead).
   */
  pipeToken?: string | (() => string) | null;
  /** The next step an unreachable Bridge's error names (./start-hint.ts); default: its MCP-safe form. */
  startHint?: string;
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
    let token: string | null;
    try {
      const given = this.endpoint.pipeToken ?? null;
      token = typeof given === "function" ? given() : given;
    } catch (err) {
      return Promise.reject(toServerfsError(err, "BRIDGE_IDENTITY_UNAVAILABLE", "the Bridge token cannot be read"));
    }
    return new Promise((resolve, reject) => {
      const decoder = new LineDecoder(MAX_LINE_BYTES);
      // Present only until the server has proved itself; while it is, no request has been sent.
      let handshake: { client: ClientHandshake; answered: boolean } | null = token === null ? null : { client: new ClientHandshake(token), answered: false };
      let settled = false;
      let stream: LocalStream | null = null;
      let writer: StreamWriter | null = null;
      const finish = (err: ServerfsError | null, value?: Record<string, unknown>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (stream !== null) {
          stream.onData = () => {};
          stream.onClose = () => {};
          stream.destroy();
        }
        if (err) reject(err);
        else resolve(value!);
      };
      const unreachable = (what: string) => new ServerfsError("AGENT_BRIDGE_UNAVAILABLE", `${what}; fix: ${this.endpoint.startHint ?? bridgeStartHint()}`);
      const timer = setTimeout(
        () =>
          finish(
            stream !== null ? new ServerfsError("AGENT_BRIDGE_UNAVAILABLE", "Agent Bridge did not answer in time") : unreachable("Agent Bridge is not reachable"),
          ),
        timeoutMs,
      );
      /** One handshake line; true once the server has proved itself and the request is sent. */
      const authenticate = (line: Uint8Array, hs: { client: ClientHandshake; answered: boolean }): boolean => {
        if (!hs.answered) {
          writer!.send(hs.client.respond(line));
          hs.answered = true;
          return false;
        }
        hs.client.confirm(line);
        handshake = null;
        writer!.send(frame);
        return true;
      };
      const onData = (chunk: Uint8Array) => {
        const lines = decoder.push(chunk);
        try {
          for (let i = 0; i < lines.length; i++) {
            const line = lines[i]!;
            if (handshake !== null) {
              if (line.byteLength > MAX_HANDSHAKE_LINE_BYTES) throw notAuthentic("sent an over-long line before proving it is the Bridge");
              // Anything after the server's proof in the same read was sent before our request.
              if (authenticate(line, handshake) && (i + 1 < lines.length || decoder.partialBytes > 0)) {
                throw new ServerfsError("AGENT_BRIDGE_PROTOCOL_ERROR", "Bridge spoke before the request");
              }
              continue;
            }
            const reply = parseResponseLine(line, requestId);
            return finish(reply.ok ? null : failureToError(reply), reply.ok ? reply.result : undefined);
          }
        } catch (err) {
          return finish(toServerfsError(err, "AGENT_BRIDGE_PROTOCOL_ERROR", "malformed Bridge reply"));
        }
        if (handshake !== null && decoder.partialBytes > MAX_HANDSHAKE_LINE_BYTES) {
          return finish(notAuthentic("sent an over-long line before proving it is the Bridge"));
        }
        if (decoder.overflow) finish(new ServerfsError("AGENT_BRIDGE_PROTOCOL_ERROR", "Bridge reply too large"));
      };
      const onClose = () => {
        if (handshake !== null && !handshake.answered) {
          return finish(unreachable("Agent Bridge closed the connection before the handshake"));
        }
        if (handshake !== null) return finish(notAuthentic("closed the connection without proving it is the Bridge"));
        finish(new ServerfsError("AGENT_BRIDGE_PROTOCOL_ERROR", "Bridge closed the connection without a reply"));
      };
      const opened = (s: LocalStream) => {
        if (settled) return s.destroy();
        stream = s;
        // The kernel's word on who serves the pipe comes before the token's: a server of another
        // user is sent nothing at all, not even our half of the handshake.
        if (s.peer !== null && !s.peer.sameUser) return finish(notAuthentic("is served by another user"));
        writer = new StreamWriter(s);
        s.onData = onData;
        s.onClose = onClose;
        s.onDrain = () => writer!.flush();
        if (handshake === null) writer.send(frame);
      };
      const open = () => {
        if (settled) return;
        connectLocal(this.endpoint.path).then(
          (result) => {
            if (typeof result !== "string") return opened(result);
            if (result === "busy" && !settled) return void setTimeout(open, BUSY_RETRY_MS);
            finish(unreachable("Agent Bridge is not reachable"));
          },
          () => finish(unreachable("Agent Bridge is not reachable")),
        );
      };
      open();
    });
  }
}
