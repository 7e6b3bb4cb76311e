// Tracks requests being handled so shutdown can let them answer before stdout is closed, and
// cancel the ones that would outlive the grace period (a long search stops at its next check).
export class InFlight {
  private readonly active = new Set<Promise<unknown>>();
  private readonly stop = new AbortController();

  /** Aborted when shutdown gives up waiting; handlers combine it with the request's own signal. */
  get shutdownSignal(): AbortSignal {
    return this.stop.signal;
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.active.add(work);
    const forget = () => this.active.delete(work);
    work.then(forget, forget);
    return work;
  }

  get size(): number {
    return this.active.size;
  }

  /** Wait up to `graceMs` for requests to finish, then abort the rest and wait up to `abortMs` more. */
  async drain(graceMs: number, abortMs: number): Promise<void> {
    if (await this.settledWithin(graceMs)) return;
    this.stop.abort();
    await this.settledWithin(abortMs);
  }

  private async settledWithin(ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    // New requests may arrive while waiting (a client can pipeline after EOF is seen): loop.
    while (this.active.size > 0) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      });
      await Promise.race([Promise.allSettled([...this.active]), timeout]);
      clearTimeout(timer);
    }
    return true;
  }
}
