// One accepted connection: line framing, strictly sequential dispatch, and a write queue.
// Bun.listen sockets do not buffer writes, so anything the kernel does not take now is queued and
// flushed from the drain callback; closing waits for the queue to empty.
import { toServerfsError } from "../../errors.ts";
import { checkParams } from "./params.ts";
import {
  EnvelopeError,
  LineDecoder,
  encodeResponse,
  failure,
  parseRequestLine,
  type RpcResponse,
} from "./protocol.ts";

export type Dispatch = (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** The few socket operations a connection needs; satisfied by Bun sockets and node:net sockets. */
export interface RawSocket {
  write(data: Uint8Array): number;
  end(): void;
  /** Half-close our side (FIN) while still reading, if the socket supports it. */
  shutdown?(): void;
}

/** How long a closing connection keeps swallowing input, so the peer reads our last reply instead of a reset. */
const LINGER_MS = 250;

export class Connection {
  private readonly decoder = new LineDecoder();
  private readonly pending: Uint8Array[] = [];
  private readonly outbox: Uint8Array[] = [];
  private busy = false;
  private closing = false;
  closed = false;

  constructor(
    private readonly socket: RawSocket,
    private readonly dispatch: Dispatch,
    private readonly log: (event: string, fields: Record<string, unknown>) => void,
  ) {}

  onData(data: Uint8Array): void {
    if (this.closing || this.closed) return;
    const lines = this.decoder.push(data);
    for (const line of lines) this.pending.push(line);
    if (this.decoder.overflow) {
      // Requests already complete before the oversized one are still answered, in order.
      this.pending.push(OVERFLOW);
    }
    void this.pump();
  }

  /** Send a response and close once it is flushed (used for PEER_NOT_AUTHORIZED). */
  rejectAndClose(response: RpcResponse): void {
    this.send(response);
    this.closeWhenFlushed();
  }

  onDrain(): void {
    this.flush();
  }

  onClose(): void {
    this.closed = true;
    this.outbox.length = 0;
    this.pending.length = 0;
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.pending.length > 0 && !this.closed) {
        const line = this.pending.shift()!;
        if (line === OVERFLOW) {
          this.send(failure(null, "REQUEST_TOO_LARGE", "request line exceeds the 1 MiB limit"));
          this.pending.length = 0;
          this.closeWhenFlushed();
          return;
        }
        if (isBlank(line)) continue;
        this.send(await this.handle(line));
      }
    } finally {
      this.busy = false;
    }
  }

  private async handle(line: Uint8Array): Promise<RpcResponse> {
    let requestId: string | null = null;
    try {
      const req = parseRequestLine(line);
      requestId = req.request_id;
      const params = checkParams(req.method, req.params);
      const result = await this.dispatch(req.method, params);
      return { request_id: req.request_id, ok: true, result };
    } catch (err) {
      if (err instanceof EnvelopeError) return failure(err.requestId, err.code, err.message);
      const e = toServerfsError(err, "BRIDGE_PROTOCOL_ERROR", "protocol failure");
      if (e.code === "BRIDGE_PROTOCOL_ERROR" || e.code === "INTERNAL_ERROR") {
        this.log("rpc.unexpected_error", { error: err instanceof Error ? err.name : typeof err });
      }
      return failure(requestId, e.code === "INTERNAL_ERROR" ? "BRIDGE_PROTOCOL_ERROR" : e.code, e.message);
    }
  }

  private send(response: RpcResponse): void {
    if (this.closed) return;
    this.outbox.push(encodeResponse(response));
    this.flush();
  }

  private flush(): void {
    while (this.outbox.length > 0 && !this.closed) {
      const head = this.outbox[0]!;
      const n = this.socket.write(head);
      if (n <= 0) return;
      if (n < head.byteLength) {
        this.outbox[0] = head.subarray(n);
        return;
      }
      this.outbox.shift();
    }
    if (this.outbox.length === 0 && this.closing && !this.closed) {
      this.closed = true;
      try {
        this.socket.shutdown?.();
      } catch {
        // not supported: the timer below still closes
      }
      setTimeout(() => this.socket.end(), LINGER_MS);
    }
  }

  private closeWhenFlushed(): void {
    this.closing = true;
    this.flush();
  }
}

const OVERFLOW = new Uint8Array(0);

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}
