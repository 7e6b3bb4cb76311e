// serve's stdio transport: newline-delimited JSON-RPC, like the SDK's StdioServerTransport, with
// one difference that needs the raw frame: every parsed value goes through `checkInbound` first,
// so a request the SDK would silently drop (and leave its client waiting) or answer with -32603
// gets a one-line coded error instead. The SDK's transport parses and validates inside a private
// buffer, so it cannot be hooked; this one keeps its observable contract (frame cap closes the
// transport, `send` resolves once written or drained). Memory: a frame's chunks are kept as a list
// and joined once (the SDK re-joined the whole buffer on every chunk, so an 11 MB upload copied
// about 1 GB), and answers are written in pieces (stdio-buffers.ts).
import { once } from "node:events";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { framePieces } from "./stdio-buffers.ts";
import { type Inbound, type RequestSchemas, checkInbound } from "./wire.ts";

/**
 * After a frame this large (an upload, a near-limit edit) is parsed, its bytes and text are dead:
 * collecting them at once, rather than when the allocator next feels pressure, lets the copies
 * the tool makes next (base64 decoding, edits) reuse that memory instead of adding to the peak.
 * A full collection costs milliseconds; such frames are rare.
 */
const BIG_FRAME_BYTES = 1024 * 1024;

export interface GatedTransportOptions {
  maxFrameBytes: number;
  requests: RequestSchemas;
  /** Told about every frame that was refused or dropped (for logging; never given the frame). */
  onRefused?: (verdict: Exclude<Inbound, { kind: "pass" }>) => void;
  /** Told once when the transport closes, whoever owns `onclose` (serveStdio claims it). */
  onClosed?: () => void;
  /** Told once, after the first answer (initialize's, or server/discover's) has been written. */
  onFirstAnswer?: () => void;
}

export class GatedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  // Pieces of the frame in progress, joined once its newline arrives (no copy per chunk).
  private pieces: Buffer[] = [];
  private pending = 0;
  private started = false;
  private closed = false;
  private answered = false;
  /** The last answer's write: answers go out one at a time, so their pieces never interleave. */
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly stdin: NodeJS.ReadableStream,
    private readonly stdout: NodeJS.WritableStream,
    private readonly options: GatedTransportOptions,
  ) {}

  async start(): Promise<void> {
    if (this.started) throw new Error("transport already started");
    this.started = true;
    this.stdin.on("data", this.ondata);
    this.stdin.on("error", this.onstreamerror);
  }

  private readonly onstreamerror = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly ondata = (chunk: Buffer | string): void => {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let start = 0;
    while (!this.closed) {
      const nl = buf.indexOf(10, start);
      if (nl === -1) break;
      const piece = buf.subarray(start, nl);
      start = nl + 1;
      if (this.pending + piece.length > this.options.maxFrameBytes) return this.overflow();
      const frame = this.pending === 0 ? piece : Buffer.concat([...this.pieces, piece]);
      this.pieces = [];
      this.pending = 0;
      this.deliver(frame);
    }
    if (this.closed || start >= buf.length) return;
    const rest = buf.subarray(start);
    if (this.pending + rest.length > this.options.maxFrameBytes) return this.overflow();
    this.pieces.push(rest);
    this.pending += rest.length;
  };

  private overflow(): void {
    this.pieces = [];
    this.pending = 0;
    this.onerror?.(new Error(`frame exceeds ${this.options.maxFrameBytes} bytes`));
    void this.close();
  }

  private deliver(frame: Buffer): void {
    let end = frame.length;
    if (end > 0 && frame[end - 1] === 13) end -= 1;
    let value: unknown;
    try {
      value = JSON.parse(frame.toString("utf8", 0, end));
    } catch {
      this.onerror?.(new Error("frame is not JSON"));
      return;
    } finally {
      if (frame.length >= BIG_FRAME_BYTES) Bun.gc(true);
    }
    const verdict = checkInbound(value, this.options.requests);
    if (verdict.kind === "pass") {
      this.onmessage?.(verdict.message);
      return;
    }
    this.options.onRefused?.(verdict);
    if (verdict.kind === "refuse") void this.send(verdict.reply);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.ondata);
    this.stdin.off("error", this.onstreamerror);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.pieces = [];
    this.pending = 0;
    this.onclose?.();
    this.options.onClosed?.();
  }

  /**
   * Answers are serialised and written in pieces of about 1 MiB (framePieces), waiting for
   * 'drain' between them: an 8 MiB download never exists as one string, nor queued whole in
   * stdout. A failed write (EPIPE: the client is gone) rejects that answer; later ones still queue.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const pieces = framePieces(message);
    const sent = this.tail.then(async () => {
      for (const piece of pieces) if (!this.stdout.write(piece)) await once(this.stdout, "drain");
    });
    this.tail = sent.catch(() => {});
    if (!this.answered && "id" in message && ("result" in message || "error" in message)) {
      this.answered = true;
      const first = this.options.onFirstAnswer;
      if (first !== undefined) void sent.then(first, first);
    }
    return sent;
  }

  /** Resolves once every answer sent so far is written (shutdown waits for it before ending stdout). */
  flushed(): Promise<void> {
    return this.tail;
  }
}
