// Memory-bounded reading and writing for the SDK's stdio transport, which is otherwise kept as is.
// - Reading: the SDK's ReadBuffer concatenates the whole buffered frame with every incoming chunk,
//   so one 11 MB upload frame arriving in 64 KiB chunks copied ~1 GB and peaked serve at ~240 MB
//   RSS. FrameBuffer keeps the chunks in a list, looks for '\n' only in bytes it has not looked at
//   yet, and joins a frame exactly once. Same contract (append / readMessage / clear, the same
//   size error).
// - Writing: the SDK writes each answer as one JSON.stringify'd string, which stdout then converts
//   and queues whole: an 8 MiB download (an 11 MB frame) cost four more full copies. Here an
//   answer is serialised and written in 1 MiB pieces, waiting for 'drain' between them, one answer
//   at a time so frames never mix.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { deserializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * After a frame this large (an upload, a near-limit edit) is parsed, its text and decoded pieces
 * are dead: collecting them at once, rather than when the allocator next feels pressure, lets the
 * copies the tool makes next (base64 decoding, edits) reuse that memory instead of adding to the
 * peak. A full collection costs milliseconds; such frames are rare.
 */
const BIG_FRAME_BYTES = 1024 * 1024;

export class FrameBuffer {
  /** Decoded text of the frame still arriving, one piece per chunk; chunks are not kept. */
  private pieces: string[] = [];
  private readonly decoder = new TextDecoder("utf-8");
  /** Complete frames not yet handed out. */
  private ready: { text: string; bytes: number }[] = [];
  private partialBytes = 0;
  private readyBytes = 0;

  constructor(private readonly maxBufferSize: number) {}

  append(chunk: Buffer): void {
    if (this.partialBytes + this.readyBytes + chunk.length > this.maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBufferSize} bytes`);
    }
    let start = 0;
    // A '\n' byte never sits inside a multi-byte UTF-8 sequence, so each frame's decoder ends there.
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.pieces.push(this.decoder.decode(chunk.subarray(start, nl)));
      const bytes = this.partialBytes + nl - start;
      const text = this.pieces.length === 1 ? (this.pieces[0] as string) : this.pieces.join("");
      this.ready.push({ text: text.endsWith("\r") ? text.slice(0, -1) : text, bytes });
      this.readyBytes += bytes;
      this.pieces = [];
      this.partialBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.pieces.push(this.decoder.decode(chunk.subarray(start), { stream: true }));
      this.partialBytes += chunk.length - start;
    }
  }

  readMessage(): JSONRPCMessage | null {
    const next = this.ready.shift();
    if (next === undefined) return null;
    this.readyBytes -= next.bytes;
    // Taken off the queue before parsing, so a malformed frame is reported once and never re-read.
    const message = deserializeMessage(next.text);
    if (next.bytes >= BIG_FRAME_BYTES) {
      next.text = "";
      Bun.gc(true);
    }
    return message;
  }

  clear(): void {
    this.pieces = [];
    this.ready = [];
    this.partialBytes = 0;
    this.readyBytes = 0;
    this.decoder.decode(); // drop any half sequence
  }
}

const SEND_SLICE_CHARS = 1024 * 1024;

/**
 * One answer as JSON text in pieces of at most about SEND_SLICE_CHARS, followed by '\n'. Strings
 * longer than a slice (a download's base64, a large page) are left out of the one JSON.stringify
 * call, via a per-answer placeholder, and escaped slice by slice as they are written: the
 * answer never exists as one string. Slicing anywhere is safe because JSON escapes code units,
 * so a surrogate pair split between two slices decodes back to the same pair.
 */
export function* framePieces(message: unknown): Generator<string> {
  const big: string[] = [];
  const mark = `\u0000serverfs-${randomBytes(8).toString("hex")}-`;
  const head = JSON.stringify(message, (_key, value: unknown) => {
    if (typeof value === "string" && value.length > SEND_SLICE_CHARS) {
      big.push(value);
      return `${mark}${big.length - 1}`;
    }
    return value;
  });
  if (big.length === 0) {
    yield `${head}\n`;
    return;
  }
  // The placeholder as it appears in the JSON text (its NUL is escaped as \u0000).
  const quoted = JSON.stringify(mark).slice(0, -1);
  let from = 0;
  for (let i = 0; i < big.length; i++) {
    const token = `${quoted}${i}"`;
    const at = head.indexOf(token, from);
    yield `${head.slice(from, at)}"`;
    const value = big[i] as string;
    for (let j = 0; j < value.length; j += SEND_SLICE_CHARS) yield JSON.stringify(value.slice(j, j + SEND_SLICE_CHARS)).slice(1, -1);
    yield '"';
    from = at + token.length;
  }
  yield `${head.slice(from)}\n`;
}

interface SdkStdioTransport {
  send(message: JSONRPCMessage): Promise<void>;
}

/**
 * Fit an SDK StdioServerTransport with FrameBuffer and sliced sends. The SDK keeps its read buffer
 * in a private field; if a future SDK renames it this throws at start-up rather than silently
 * keeping the quadratic buffer.
 */
export function tuneStdioTransport(
  transport: SdkStdioTransport,
  stdout: NodeJS.WritableStream,
  maxBufferSize: number,
): { flushed: () => Promise<void> } {
  const t = transport as unknown as { _readBuffer?: unknown };
  if (t._readBuffer === undefined) throw new Error("the SDK stdio transport no longer has _readBuffer: review src/mcp/stdio-buffers.ts");
  t._readBuffer = new FrameBuffer(maxBufferSize);

  let tail: Promise<void> = Promise.resolve();
  const write = async (pieces: Iterable<string>): Promise<void> => {
    for (const piece of pieces) if (!stdout.write(piece)) await once(stdout, "drain");
  };
  transport.send = (message) => {
    const pieces = framePieces(message);
    const sent = tail.then(() => write(pieces));
    // A failed write (EPIPE: the client is gone) is the caller's error; later answers still queue.
    tail = sent.catch(() => {});
    return sent;
  };
  // Shutdown waits for this before ending stdout, so a large answer is never cut between slices.
  return { flushed: () => tail };
}
