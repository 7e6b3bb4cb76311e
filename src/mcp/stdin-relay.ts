// serve's stdin, read from the start but handed to the transport only once the full server is up.
// The opening (opening.ts) reads the first chunks while the SDK is not loaded; every chunk is kept
// until the transport attaches, which then reads all of them in order, so it sees exactly the bytes
// a transport attached at start would have seen. The relay reads its source from the moment it is
// made and never detaches from it: a stream whose last 'data' listener goes away keeps flowing and
// loses what it emits next. Nor does it pause the source while it holds chunks (the server loads
// in well under a second): with Bun 1.4.4, pausing and resuming stdin could leave the event loop
// asleep with an immediate queued (serve's temp sweep then waited for stdin's next byte).

/** What the stdio transport (transport.ts) reads frames from. */
export interface FrameSource {
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "data", listener: (chunk: Buffer) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
  listenerCount(event: "data"): number;
  pause(): unknown;
}

type Held = { chunk: Buffer } | { error: Error };

export class StdinRelay implements FrameSource {
  private readonly dataListeners: Array<(chunk: Buffer) => void> = [];
  private readonly errorListeners: Array<(error: Error) => void> = [];
  /** Chunks (and errors) read before a 'data' listener attached, in order. */
  private held: Held[] = [];
  private releasing = false;
  private tapped: ((chunk: Buffer) => void) | undefined;

  constructor(private readonly source: NodeJS.ReadableStream) {
    source.on("data", this.ondata);
    source.on("error", this.onerror);
  }

  /** The opening's view of each chunk as it arrives, until `untap`; the chunks are kept either way. */
  tap(listener: (chunk: Buffer) => void): void {
    this.tapped = listener;
  }

  untap(): void {
    this.tapped = undefined;
  }

  on(event: "data", listener: (chunk: Buffer) => void): this;
  on(event: "error", listener: (error: Error) => void): this;
  on(event: "data" | "error", listener: ((chunk: Buffer) => void) | ((error: Error) => void)): this {
    if (event === "error") {
      this.errorListeners.push(listener as (error: Error) => void);
      return this;
    }
    this.dataListeners.push(listener as (chunk: Buffer) => void);
    // Not from inside on(): the transport attaches its error listener right after this one.
    if (!this.releasing && this.dataListeners.length === 1) {
      this.releasing = true;
      queueMicrotask(() => this.release());
    }
    return this;
  }

  off(event: "data", listener: (chunk: Buffer) => void): this;
  off(event: "error", listener: (error: Error) => void): this;
  off(event: "data" | "error", listener: ((chunk: Buffer) => void) | ((error: Error) => void)): this {
    const list: unknown[] = event === "data" ? this.dataListeners : this.errorListeners;
    const at = list.indexOf(listener);
    if (at !== -1) list.splice(at, 1);
    return this;
  }

  listenerCount(event: "data" | "error"): number {
    return event === "data" ? this.dataListeners.length : this.errorListeners.length;
  }

  pause(): this {
    this.source.pause();
    return this;
  }

  /** Stop reading for good (start-up failed after the relay was made). */
  close(): void {
    this.source.off("data", this.ondata);
    this.source.off("error", this.onerror);
    this.source.pause();
    this.held = [];
    this.tapped = undefined;
  }

  private release(): void {
    this.releasing = false;
    const held = this.held;
    this.held = [];
    for (const item of held) {
      if ("chunk" in item) this.deliver(item.chunk);
      else this.fail(item.error);
    }
  }

  private readonly ondata = (chunk: Buffer | string): void => {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    this.tapped?.(buf);
    if (this.releasing || this.dataListeners.length === 0) this.held.push({ chunk: buf });
    else this.deliver(buf);
  };

  private readonly onerror = (error: Error): void => {
    if (this.releasing || this.dataListeners.length === 0) this.held.push({ error });
    else this.fail(error);
  };

  private deliver(chunk: Buffer): void {
    for (const listener of [...this.dataListeners]) listener(chunk);
  }

  private fail(error: Error): void {
    for (const listener of [...this.errorListeners]) listener(error);
  }
}
