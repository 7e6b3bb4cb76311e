// Keeps only the most recent `limit` bytes of a stream (a provider's stderr), so a chatty or
// hostile child cannot grow the Bridge's memory.

export class ByteRing {
  private readonly buffer: Uint8Array;
  private start = 0;
  private length = 0;

  constructor(readonly limit: number) {
    this.buffer = new Uint8Array(Math.max(0, limit));
  }

  push(chunk: Uint8Array): void {
    const cap = this.buffer.length;
    if (cap === 0 || chunk.length === 0) return;
    // Only the tail of a chunk larger than the whole buffer can survive.
    const data = chunk.length > cap ? chunk.subarray(chunk.length - cap) : chunk;
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
    const first = Math.min(this.length, cap - this.start);
    out.set(this.buffer.subarray(this.start, this.start + first), 0);
    if (first < this.length) out.set(this.buffer.subarray(0, this.length - first), first);
    return out;
  }
}
