// One large answer at a time. A media read or a download answers with the whole file as base64:
// its bytes, their base64 text and the SDK's validation copy of it are alive until the answer is
// written, about five times the file. A client that writes ten 5 MiB reads at once (or pipelines
// them) had ten of those alive together, and serve's peak reached 215 MB. So a tool whose answer
// is that large runs inside `largeAnswers.run`: it starts only once the previous one's answer
// has been written out (the stdio transport reports each written answer by id), or its request
// was cancelled. The others wait holding nothing. Each ServerfsMcp has its gate (server.ts), and
// only serveOverStdio, whose transport reports written answers, switches it to holding the slot
// until the write; elsewhere (the in-memory transport of the tests) it is let go when the tool
// returns.

type RequestId = string | number;

export class LargeAnswerGate {
  private holder: { id: RequestId | undefined } | null = null;
  private readonly waiting: Array<() => void> = [];
  private reported = false;

  /** The transport in use will call `written` for every answer it writes (serveOverStdio says so once). */
  reportsWrittenAnswers(): void {
    this.reported = true;
  }

  /**
   * Run `produce` (which builds the large answer to request `id`) once the slot is free, and hold
   * the slot until that answer is written, or `signal` aborts (a cancelled request gets no answer).
   */
  async run<T>(id: RequestId | undefined, signal: AbortSignal, produce: () => Promise<T>): Promise<T> {
    while (this.holder !== null) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const held = { id };
    this.holder = held;
    let produced = false;
    try {
      const result = await produce();
      produced = true;
      return result;
    } finally {
      if (!produced || !this.reported || id === undefined || signal.aborted) this.release(held);
      else signal.addEventListener("abort", () => this.release(held), { once: true });
    }
  }

  /** The transport wrote (or failed to write) the answer to `id`. */
  written(id: RequestId): void {
    if (this.holder !== null && this.holder.id === id) this.release(this.holder);
  }

  private release(held: { id: RequestId | undefined }): void {
    if (this.holder !== held) return;
    this.holder = null;
    this.waiting.shift()?.();
  }
}
