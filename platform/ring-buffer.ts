// Keeps only the most recent `limit` bytes of a stream (a provider's stderr), so a chatty or
// hostile child cannot grow the Bridge's memory. The buffer grows with what actually arrived: most
// providers write little or nothing to stderr, and a ring allocated at its limit up front cost every
// task 64 KiB of zeroed memory that stayed resident until the next GC.

const FIRST_BYTES = 1024;

export class ByteRing {
  private buffer = new Uint8Array(0);
  private start = 0;
  private length = 0;

  constructor(readonly limit: number) {}

  /** Bytes the ring holds memory for (never more than `limit`). */
  get allocatedBytes(): number {
    return this.buffer.length;
  }

  push(chunk: Uint8Array): void {
    if (this.limit <= 0 || chunk.length === 0) return;
    // Only the tail of a chunk larger than the whole ring can survive.
    const data = chunk.length > this.limit ? chunk.subarray(chunk.length - this.limit) : chunk;
    if (this.buffer.length < this.limit && this.length + data.length > this.buffer.length) this.grow(this.length + data.length);
    const cap = this.buffer.length;
    for (let offset = 0; offset < data.length; ) {
      const writeAt = (this.start + this.length) % cap;
      const run = Math.min(data.length - offset, cap - writeAt);
      this.buffer.set(data.subarray(offset, offset + run), writeAt);
      offset += run;
      const overflow = this.length + run - cap;
      if (overflow > 0) {
        this.start = (this.start + overflow) % cap;
        this.length = cap;
      } else {
        this.length += run;
      }
    }
  }

  /** A copy of the kept bytes, oldest first. */
  snapshot(): Uint8Array {
    const cap = this.buffer.length;
    const out = new Uint8Array(this.length);
    if (this.length === 0) return out;
    const first = Math.min(this.length, cap - this.start);
    out.set(this.buffer.subarray(this.start, this.start + first), 0);
    if (first < this.length) out.set(this.buffer.subarray(0, this.length - first), first);
    return out;
  }

  /** Doubling up to the limit keeps the copies linear in the bytes kept. */
  private grow(needed: number): void {
    const size = Math.min(this.limit, Math.max(needed, this.buffer.length * 2, FIRST_BYTES));
    const kept = this.snapshot();
    this.buffer = new Uint8Array(size);
    this.buffer.set(kept, 0);
    this.start = 0;
  }
}

/**
 * A stream's most recent bytes, kept in a ByteRing as they arrive: a provider's stderr. The pipe is
 * read asynchronously, so bytes a process wrote just before it died may still be on their way when
 * it is gone; `drained` waits for the stream's end, after which the tail holds all it carried.
 */
export class StreamTail {
  private readonly ring: ByteRing;
  private readonly ended: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>, limit: number) {
    this.ring = new ByteRing(limit);
    this.ended = this.pump(stream);
  }

  snapshot(): Uint8Array {
    return this.ring.snapshot();
  }

  /**
   * Resolves once the stream has ended, or after `ms` at most: an end that never comes (a writer
   * left outside the tree) costs the wait, never a hang.
   */
  async drained(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.ended, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const chunk of stream) this.ring.push(chunk);
    } catch {
      // The pipe closed under us (child killed): the tail we have is the tail.
    }
  }
}
