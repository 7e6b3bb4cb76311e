// The cancel shutdown sends to the requests still in flight once its grace is over (a long search
// stops at its next check and answers its coded error). Which requests are still unanswered is the
// transport's to know (GatedStdioTransport.answeredWithin): it sees every request the SDK was
// handed, including one that has not reached its handler yet.
export class InFlight {
  private readonly stop = new AbortController();

  /** Aborted when shutdown gives up waiting; handlers combine it with the request's own signal. */
  get shutdownSignal(): AbortSignal {
    return this.stop.signal;
  }

  /** Cancel every request that combined the shutdown signal into its own. */
  cancelAll(): void {
    this.stop.abort();
  }
}
