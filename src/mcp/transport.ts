// serve's stdio transport: newline-delimited JSON-RPC, like the SDK's StdioServerTransport, with
// differences that need the raw frame. Every frame goes through the wire gate first (`checkFrame`:
// its parse cost is bounded from its bytes as they arrive, then its shape is checked) and then
// through the connection's era lock, so a request the SDK would silently drop (and leave its
// client waiting), answer with -32603, or take as a switch of the connection's era gets a one-line
// coded error instead. And it knows which delivered requests are still unanswered, so shutdown can
// answer every one. The SDK's transport parses and validates inside a private buffer, so it cannot
// be hooked; this one keeps its observable contract (frame cap closes the transport, `send`
// resolves once written or drained). Memory: a frame's chunks are kept as a list and joined once
// (the SDK re-joined the whole buffer on every chunk, so an 11 MB upload copied about 1 GB), a
// frame over a bound is not kept at all, and answers are written in pieces (stdio-buffers.ts).
import { once } from "node:events";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/server";
import { EraLock } from "./era.ts";
import { type FrameShape, FrameScanner } from "./frame-scan.ts";
import type { FrameSource } from "./stdin-relay.ts";
import { framePieces } from "./stdio-buffers.ts";
import { type Inbound, type RequestSchemas, type WireError, checkFrame } from "./wire.ts";

/**
 * After a frame this large (an upload, a near-limit edit) is parsed, its bytes and text are dead:
 * collecting them at once, rather than when the allocator next feels pressure, lets the copies
 * the tool makes next (base64 decoding, edits) reuse that memory instead of adding to the peak.
 * A full collection costs milliseconds; such frames are rare.
 */
const BIG_FRAME_BYTES = 1024 * 1024;

/**
 * A frame over a bound is read to its newline and dropped, but every chunk stdin hands over is a
 * fresh buffer, and the collector let tens of MB of them pile up before it ran: with three 17 MB
 * hostile frames and a search beside them the executable's peak reached 120.2 MB of its 120 (92-114
 * in other runs). Collecting after each few MB of dropped bytes keeps that garbage small; it costs
 * a few milliseconds per collection, on frames that are never parsed anyway.
 */
const DROPPED_COLLECT_BYTES = 4 * 1024 * 1024;

/**
 * Once an answer this large (a media read's or a download's base64, a large page) is written, the
 * file's bytes, their base64 text, the SDK's validation copy of it and the written pieces are all
 * garbage, about five times the file. The collector, paced by allocation, let twenty 5 MiB media
 * reads in a row pile them up to 148 MB; collecting after each such answer frees them before the
 * next request allocates its own. A full collection costs milliseconds; such answers are rare.
 */
const BIG_ANSWER_CHARS = 1024 * 1024;

export interface GatedTransportOptions {
  maxFrameBytes: number;
  requests: RequestSchemas;
  /** Told about every frame that was refused or dropped (for logging; never given the frame). */
  onRefused?: (verdict: Exclude<Inbound, { kind: "pass" }>) => void;
  /** Told once when the transport closes, whoever owns `onclose` (serveStdio claims it). */
  onClosed?: () => void;
  /** Told once, after the first answer (initialize's, or server/discover's) has been written. */
  onFirstAnswer?: () => void;
  /**
   * Told once, when the server sends its first answer of its own, to a request that `answered`
   * does not hold (its answers to the opening's requests are dropped, not counted): on a
   * connection whose opening the server answered itself, its answer to initialize.
   */
  onFirstOwnAnswer?: () => void;
  /** Told after each answer has been written (or its write failed), with the request's id. */
  onAnswerWritten?: (id: string | number) => void;
  /**
   * Answers already written, by request id, for requests this transport will read (the opening,
   * src/mcp/opening.ts, answered them before the server was loaded): the server's own answer to
   * each is not written again, and if it is not the same text `onAnsweredMismatch` is told.
   */
  answered?: ReadonlyMap<string | number, string>;
  onAnsweredMismatch?: () => void;
}

export class GatedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  // Pieces of the frame in progress, joined once its newline arrives (no copy per chunk).
  private pieces: Buffer[] = [];
  private pending = 0;
  /** Whether the frame in progress is still kept for parsing (not once it is over a bound). */
  private keeping = true;
  /** The frame in progress was already answered or dropped from its first bytes; the rest is skipped. */
  private settled = false;
  /** Bytes of dropped frames read since the last collection (see DROPPED_COLLECT_BYTES). */
  private dropped = 0;
  private readonly scanner = new FrameScanner();
  private started = false;
  private closed = false;
  private answered = false;
  private ownAnswered = false;
  /** The last answer's write: answers go out one at a time, so their pieces never interleave. */
  private tail: Promise<void> = Promise.resolve();
  private readonly era = new EraLock();
  /** Ids of requests handed to the SDK and not yet answered. */
  private readonly unanswered = new Set<string | number>();
  private answeredWaiters: Array<() => void> = [];
  /** What is left of `options.answered`: each entry is used once. */
  private readonly alreadyAnswered: Map<string | number, string>;

  constructor(
    private readonly stdin: FrameSource,
    private readonly stdout: NodeJS.WritableStream,
    private readonly options: GatedTransportOptions,
  ) {
    this.alreadyAnswered = new Map(options.answered ?? []);
  }

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
      this.scan(piece);
      const settled = this.settled;
      const shape = this.scanner.finish();
      const frame = !this.keeping ? undefined : this.pending === 0 ? piece : Buffer.concat([...this.pieces, piece]);
      this.pieces = [];
      this.pending = 0;
      this.keeping = true;
      this.settled = false;
      this.scanner.reset();
      if (!settled) this.deliver(shape, frame);
    }
    if (this.closed || start >= buf.length) return;
    const rest = buf.subarray(start);
    if (this.pending + rest.length > this.options.maxFrameBytes) return this.overflow();
    this.scan(rest);
    this.pending += rest.length;
    if (this.keeping) this.pieces.push(rest);
  };

  /**
   * Scan a piece of the frame in progress. Once the frame is over a bound (or is a batch) nothing
   * of it will be parsed, so its bytes are let go at once: only the scan goes on, for its `id`.
   */
  private scan(piece: Buffer): void {
    // (A settled frame is never kept: settling happens only once keeping stopped.)
    if (!this.keeping) this.noteDropped(piece.length);
    if (this.settled) {
      // Only the newline that ends it matters now; its bytes still count against the cap.
      return;
    }
    this.scanner.feed(piece, 0, piece.length);
    if (this.keeping && (this.scanner.over !== undefined || this.scanner.top === "array")) {
      this.keeping = false;
      this.pieces = [];
    }
    // A batch, or a request over a bound whose id and method came before the bound was crossed,
    // is answered now, while the rest of it may still be on its way: its answer never waits for
    // megabytes that will not be read.
    if (!this.keeping && (this.scanner.top === "array" || this.scanner.membersKnown)) {
      this.settled = true;
      this.settle(checkFrame(this.scanner.shape(), undefined, 0, this.options.requests));
    }
  }

  private noteDropped(bytes: number): void {
    this.dropped += bytes;
    if (this.dropped < DROPPED_COLLECT_BYTES) return;
    this.dropped = 0;
    Bun.gc(true);
  }

  private overflow(): void {
    this.pieces = [];
    this.pending = 0;
    this.onerror?.(new Error(`frame exceeds ${this.options.maxFrameBytes} bytes`));
    void this.close();
  }

  private deliver(shape: FrameShape, frame: Buffer | undefined): void {
    // A blank line between messages is no message: nothing to answer or log.
    if (shape.top === "none") return;
    let end = frame?.length ?? 0;
    if (frame !== undefined && end > 0 && frame[end - 1] === 13) end -= 1;
    // A big frame was joined from the stdin chunks that carried it: they are garbage now, as large
    // as the frame, and parsing adds its text and its values (an 8 MiB upload: ~11 MB each). Let
    // them go first, so the chunks, the frame, its text and its values are never all alive at once.
    if (frame !== undefined && frame.length >= BIG_FRAME_BYTES) Bun.gc(true);
    const verdict = checkFrame(shape, frame, end, this.options.requests);
    if (frame !== undefined && frame.length >= BIG_FRAME_BYTES) Bun.gc(true);
    this.settle(verdict.kind === "pass" ? this.admit(verdict.message) : verdict);
  }

  /** Hand a frame that passed to the SDK, or answer or drop it. */
  private settle(verdict: Inbound): void {
    if (verdict.kind === "pass") {
      const message = verdict.message;
      // A request the opening already answered is not waiting for anything (shutdown neither waits for it nor answers it).
      if ("method" in message && "id" in message && !this.alreadyAnswered.has(message.id)) this.unanswered.add(message.id);
      this.onmessage?.(message);
      return;
    }
    this.options.onRefused?.(verdict);
    if (verdict.kind === "refuse") void this.sendError(verdict.reply);
  }

  private admit(message: JSONRPCMessage): Inbound {
    const verdict = this.era.admit(message);
    return verdict.kind === "pass" ? { kind: "pass", message } : verdict;
  }

  /** How many requests the SDK was handed and has not answered yet. */
  get pendingRequests(): number {
    return this.unanswered.size;
  }

  /** Resolves true once every delivered request is answered, or false after `ms`. */
  async answeredWithin(ms: number): Promise<boolean> {
    if (this.unanswered.size === 0) return true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const answered = await new Promise<boolean>((resolve) => {
      this.answeredWaiters.push(() => resolve(true));
      timer = setTimeout(() => resolve(false), ms);
    });
    clearTimeout(timer);
    return answered;
  }

  /** Answer every request still unanswered with `error` (the last step of shutdown: none is left waiting). */
  answerUnanswered(error: { code: number; message: string }): void {
    for (const id of [...this.unanswered]) void this.sendError({ jsonrpc: "2.0", id, error }).catch(() => {});
  }

  private sendError(reply: WireError): Promise<void> {
    // A null id is JSON-RPC's answer to a frame whose id could not be read; the SDK's type has none.
    return this.send(reply as JSONRPCMessage);
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
    const answered = ("result" in message || "error" in message) && "id" in message ? message.id : undefined;
    // The request this answers, when it names one (an answer with id null answers no request).
    const id = answered ?? undefined;
    if (id !== undefined) this.markAnswered(id);
    const pieces = framePieces(message);
    const replayed = id !== undefined && this.alreadyAnswered.has(id);
    if (id !== undefined && !replayed && !this.ownAnswered) {
      this.ownAnswered = true;
      this.options.onFirstOwnAnswer?.();
    }
    const sent = replayed
      ? this.dropAnswered(id, pieces)
      : (this.tail = this.tail.then(async () => {
          let written = 0;
          try {
            for (const piece of pieces) {
              written += piece.length;
              if (!this.stdout.write(piece)) await once(this.stdout, "drain");
            }
          } finally {
            if (written >= BIG_ANSWER_CHARS) Bun.gc(true);
            if (id !== undefined) this.options.onAnswerWritten?.(id);
          }
        }));
    // The chain goes on after a failed write: later answers still queue.
    this.tail = this.tail.catch(() => {});
    if (!this.answered && answered !== undefined) {
      this.answered = true;
      const first = this.options.onFirstAnswer;
      if (first !== undefined) void sent.then(first, first);
    }
    return sent;
  }

  /** The server's answer to a request the opening answered: compared, never written. */
  private dropAnswered(id: string | number, pieces: Iterable<string>): Promise<void> {
    const written = this.alreadyAnswered.get(id);
    this.alreadyAnswered.delete(id);
    if ([...pieces].join("") !== written) this.options.onAnsweredMismatch?.();
    this.options.onAnswerWritten?.(id);
    return Promise.resolve();
  }

  private markAnswered(id: string | number): void {
    if (!this.unanswered.delete(id) || this.unanswered.size > 0) return;
    for (const wake of this.answeredWaiters.splice(0)) wake();
  }

  /** Resolves once every answer sent so far is written (shutdown waits for it before ending stdout). */
  flushed(): Promise<void> {
    return this.tail;
  }
}
