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
