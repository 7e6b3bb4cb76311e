// Long-poll support: `task.get` with wait_seconds parks here until the task's status or pending
// interaction changes (or time is up). No polling loop: waiters are woken by the writes themselves.
export class TaskWatchers {
  private readonly waiting = new Map<string, Set<() => void>>();

  notify(taskId: string): void {
    const set = this.waiting.get(taskId);
    if (!set) return;
    this.waiting.delete(taskId);
    for (const wake of set) wake();
  }

  /** Resolves true when notified, false on timeout or abort. */
  wait(taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      let set = this.waiting.get(taskId);
      if (!set) {
        set = new Set();
        this.waiting.set(taskId, set);
      }
      const wake = () => finish(true);
      const finish = (v: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const current = this.waiting.get(taskId);
        if (current) {
          current.delete(wake);
          if (current.size === 0) this.waiting.delete(taskId);
        }
        resolve(v);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(wake);
    });
  }

  wakeAll(): void {
    for (const id of [...this.waiting.keys()]) this.notify(id);
  }
}
