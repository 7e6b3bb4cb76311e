// One accepted connection: line framing, strictly sequential dispatch, a bounded write queue and the
// connection's clocks; plus the set of live connections that enforces the connection cap. Both
// endpoints (unix socket, Windows pipe) go through these two classes, so they share every bound.
//
// Bun.listen sockets do not buffer writes, so anything the kernel does not take now is queued and
// flushed from the drain callback; closing waits for the queue to empty. The next request is not
// started while a reply still waits for the peer: a slow reader gets back-pressure, not a growing
// queue, and a peer that keeps sending without reading runs into maxQueuedBytes.
import { toServerfsError, type ErrorCode } from "../../errors.ts";
import { DEFAULT_SOCKET_BOUNDS, MAX_LINGERING_REFUSALS, type SocketBounds } from "./bounds.ts";
import { checkParams } from "../rpc/shapes.ts";
import {
  EnvelopeError,
  LineDecoder,
  encodeResponse,
  failure,
  parseRequestLine,
  type RpcResponse,
} from "./protocol.ts";

export type Dispatch = (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>;
export type LogFn = (event: string, fields: Record<string, unknown>) => void;

/** The few socket operations a connection needs; satisfied by Bun sockets and node:net sockets. */
export interface RawSocket {
  /** Bytes the transport took now (0 when it is full: `onDrain` follows). */
  write(data: Uint8Array): number;
  end(): void;
  /** Half-close our side (FIN) while still reading, if the socket supports it. */
  shutdown?(): void;
  /** Close at once, discarding anything unsent (falls back to `end`). */
  terminate?(): void;
}

/** How long a closing connection keeps swallowing input, so the peer reads our last reply instead of a reset. */
const LINGER_MS = 250;

const now = () => performance.now();

export class Connection {
  private readonly decoder = new LineDecoder();
  private pending: Uint8Array[] = [];
  private pendingHead = 0;
  private pendingBytes = 0;
  private outbox: Uint8Array[] = [];
  private outboxBytes = 0;
  private busy = false;
  private inFlight = false;
  private closing = false;
  private overflowed = false;
  closed = false;
  /** Last byte received from the peer. */
  private lastRead = now();
  /** Last byte the transport took from us, or the moment a reply was ready to go. */
  private lastSent = this.lastRead;
  /** When the line now being received began (null: no line is half-received). */
  private partialSince: number | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  private gone = false;
  /** Called once when the socket is gone (set by ConnectionSet). */
  onGone: (() => void) | null = null;

  constructor(
    private readonly socket: RawSocket,
    private readonly dispatch: Dispatch,
    private readonly log: LogFn,
    private readonly bounds: SocketBounds = DEFAULT_SOCKET_BOUNDS,
  ) {
    this.arm(this.lastRead + bounds.idleTimeoutMs);
  }

  /** True once the last line is decided: nothing more is read or dispatched. */
  get isClosing(): boolean {
    return this.closing || this.closed;
  }

  onData(data: Uint8Array): void {
    if (this.closing || this.closed || this.overflowed) return;
    this.lastRead = now();
    const lines = this.decoder.push(data);
    for (const line of lines) {
      this.pending.push(line);
      this.pendingBytes += line.byteLength;
    }
    if (this.decoder.overflow) {
      // Requests already complete before the oversized one are still answered, in order.
      this.overflowed = true;
      this.decoder.reset();
      this.pending.push(OVERFLOW);
    }
    // The clock runs per line: a peer streaming many lines in split chunks is not one endless line.
    if (this.decoder.partialBytes === 0) this.partialSince = null;
    else if (this.partialSince === null || lines.length > 0) {
      this.partialSince = this.lastRead;
      this.arm(this.partialSince + this.bounds.partialLineTimeoutMs);
    }
    if (this.overQueueCap()) return;
    void this.pump();
  }

  /** Send a response and close once it is flushed (used for refusals before any dispatch). */
  rejectAndClose(response: RpcResponse): void {
    this.finish(response);
  }

  /** Raw bytes ahead of any reply (the pipe handshake's lines), through the same bounded queue. */
  sendBytes(bytes: Uint8Array): void {
    if (this.closing || this.closed) return;
    this.enqueue(bytes);
  }

  onDrain(): void {
    this.flush();
  }

  onClose(): void {
    this.closed = true;
    this.release();
    if (this.gone) return;
    this.gone = true;
    this.onGone?.();
  }

  /** Close at once without a last line, dropping everything queued (reason null: not worth a log line). */
  drop(reason: string | null): void {
    if (this.closed) return;
    if (reason !== null) this.log("ipc.connection_dropped", { reason });
    this.closed = true;
    this.release();
    if (this.socket.terminate) this.socket.terminate();
    else this.socket.end();
  }

  private async pump(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      while (this.pendingHead < this.pending.length && !this.closing && !this.closed) {
        // Resumed by flush() once the peer has taken the previous reply.
        if (this.outboxBytes > 0) return;
        const line = this.takePending();
        if (line === OVERFLOW) {
          this.finish(failure(null, "REQUEST_TOO_LARGE", "request line exceeds the 1 MiB limit"));
          return;
        }
        if (isBlank(line)) continue;
        this.inFlight = true;
        let reply: RpcResponse;
        try {
          reply = await this.handle(line);
        } finally {
          this.inFlight = false;
        }
        this.lastSent = now();
        this.send(reply);
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
      checkParams(req.method, req.params);
      const result = await this.dispatch(req.method, req.params);
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

  /** Next pending line; the array is compacted now and then instead of shifted per line. */
  private takePending(): Uint8Array {
    const line = this.pending[this.pendingHead]!;
    this.pending[this.pendingHead++] = TAKEN;
    this.pendingBytes -= line.byteLength;
    if (this.pendingHead === this.pending.length) {
      this.pending = [];
      this.pendingHead = 0;
    } else if (this.pendingHead >= 1024 && this.pendingHead * 2 >= this.pending.length) {
      this.pending = this.pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
    return line;
  }

  private send(response: RpcResponse): void {
    if (this.closing || this.closed) return;
    this.enqueue(encodeResponse(response));
    this.overQueueCap();
  }

  /** The last line of this connection: nothing is read or dispatched after it. */
  private finish(response: RpcResponse): void {
    if (this.closing || this.closed) return;
    this.closing = true;
    this.pending = [];
    this.pendingHead = 0;
    this.pendingBytes = 0;
    this.decoder.reset();
    this.partialSince = null;
    this.lastSent = now();
    this.arm(this.lastSent + this.bounds.idleTimeoutMs);
    this.enqueue(encodeResponse(response));
  }

  private enqueue(bytes: Uint8Array): void {
    this.outbox.push(bytes);
    this.outboxBytes += bytes.byteLength;
    this.flush();
  }

  private flush(): void {
    while (this.outbox.length > 0 && !this.closed) {
      const head = this.outbox[0]!;
      const n = this.socket.write(head);
      if (n <= 0) return;
      this.lastSent = now();
      this.outboxBytes -= Math.min(n, head.byteLength);
      if (n < head.byteLength) {
        this.outbox[0] = head.subarray(n);
        return;
      }
      this.outbox.shift();
    }
    if (this.outbox.length > 0 || this.closed) return;
    if (this.closing) {
      this.closed = true;
      this.release();
      try {
        this.socket.shutdown?.();
      } catch {
        // not supported: the timer below still closes
      }
      setTimeout(() => this.socket.end(), LINGER_MS);
    } else if (this.pendingHead < this.pending.length) {
      void this.pump();
    }
  }

  /** A peer that sends faster than it reads is cut off here, with its queue. */
  private overQueueCap(): boolean {
    if (this.pendingBytes + this.outboxBytes <= this.bounds.maxQueuedBytes) return false;
    if (this.outboxBytes === 0 && !this.closing) {
      // The peer still reads: it can be told why.
      this.log("ipc.connection_dropped", { reason: "CONNECTION_QUEUE_FULL" });
      this.finish(failure(null, "CONNECTION_QUEUE_FULL", "too many requests queued on this connection"));
    } else {
      this.drop("CONNECTION_QUEUE_FULL");
    }
    return true;
  }

  private arm(at: number): void {
    if (this.closed || (this.timer !== null && this.timerAt <= at)) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - now()));
    (this.timer as { unref?: () => void }).unref?.();
  }

  private tick(): void {
    this.timer = null;
    this.timerAt = Infinity;
    if (this.closed) return;
    const t = now();
    const idle = this.bounds.idleTimeoutMs;
    if (this.closing) {
      // Our last line is not being read either.
      if (t - this.lastSent >= idle) return this.drop("final line not read");
      return this.arm(this.lastSent + idle);
    }
    if (this.partialSince !== null && t - this.partialSince >= this.bounds.partialLineTimeoutMs) {
      return this.timeOut("REQUEST_LINE_TIMEOUT", "request line was not completed in time");
    }
    // A reply the peer does not take means the peer is idle, whatever it sends meanwhile.
    const since = this.outboxBytes > 0 ? this.lastSent : Math.max(this.lastRead, this.lastSent);
    if (!this.inFlight && t - since >= idle) return this.timeOut("CONNECTION_IDLE_TIMEOUT", "connection was idle too long");
    const idleAt = this.inFlight ? t + idle : since + idle;
    const partialAt = this.partialSince === null ? Infinity : this.partialSince + this.bounds.partialLineTimeoutMs;
    this.arm(Math.min(idleAt, partialAt));
  }

  private timeOut(code: ErrorCode, message: string): void {
    this.log("ipc.connection_timeout", { code });
    if (this.outboxBytes > 0) return this.drop(code);
    this.finish(failure(null, code, message));
  }

  /** Hand every buffer back; a closed connection keeps nothing but its flags. */
  private release(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
    this.outbox = [];
    this.outboxBytes = 0;
    this.pending = [];
    this.pendingHead = 0;
    this.pendingBytes = 0;
    this.partialSince = null;
    this.decoder.reset();
  }
}

/** The live connections of one endpoint and the cap on how many may be open at once. */
export class ConnectionSet {
  private readonly live = new Set<Connection>();
  private lingering = 0;
  private refusedSinceLog = 0;
  private lastRefusalLog = -Infinity;

  constructor(
    private readonly dispatch: Dispatch,
    private readonly log: LogFn,
    readonly bounds: SocketBounds = DEFAULT_SOCKET_BOUNDS,
  ) {}

  get size(): number {
    return this.live.size;
  }

  /** The connection for a freshly accepted socket. Over the cap it is refused: one coded line, then closed. */
  open(socket: RawSocket): Connection {
    const conn = new Connection(socket, this.dispatch, this.log, this.bounds);
    if (this.live.size < this.bounds.maxConnections) {
      this.live.add(conn);
      conn.onGone = () => this.live.delete(conn);
      return conn;
    }
    this.noteRefusal();
    if (this.lingering >= MAX_LINGERING_REFUSALS) {
      // A connect flood: do not hold a descriptor per refusal for the linger time.
      conn.drop("CONNECTION_LIMIT_REACHED");
      return conn;
    }
    this.lingering++;
    conn.onGone = () => this.lingering--;
    conn.rejectAndClose(
      failure(null, "CONNECTION_LIMIT_REACHED", `too many open connections (limit ${this.bounds.maxConnections})`),
    );
    return conn;
  }

  /** Cut every live connection (the endpoint is closing). */
  dropAll(): void {
    for (const conn of [...this.live]) conn.drop(null);
  }

  private noteRefusal(): void {
    this.refusedSinceLog++;
    const t = now();
    if (t - this.lastRefusalLog < 1000) return;
    this.log("ipc.connection_refused", { limit: this.bounds.maxConnections, refused: this.refusedSinceLog });
    this.lastRefusalLog = t;
    this.refusedSinceLog = 0;
  }
}

const OVERFLOW = new Uint8Array(0);
/** Fills a consumed slot so the line's bytes are not kept alive until the next compaction. */
const TAKEN = new Uint8Array(0);

function isBlank(line: Uint8Array): boolean {
  for (const b of line) if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  return true;
}
