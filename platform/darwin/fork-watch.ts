// The macOS fork watcher, main-thread side: one kqueue and one watcher thread per process, shared
// by every task. `watch(leader)` registers the task's leader and wakes the thread to record the
// leader's children at once; from then on the thread follows every fork of every recorded process
// (fork-watch-worker.ts). `births()` hands over what it recorded, oldest first, for TaskLineage.
// Without a working kqueue nothing is recorded and every look still classifies by the live ids:
// then only the recording is lost, never the rule that an unseen link is not proof.
import { ptr } from "bun:ffi";
import { createBirthRing, ringReader } from "./birth-ring.ts";
import { encodeKEvent, KEVENT_SIZE, wakeFor, watchProcess } from "./kevent.ts";
import type { Birth } from "./lineage.ts";
import { libSystem } from "./libsystem.ts";
import { workerScriptUrl } from "../embedded-worker.ts";

/** Records kept for lineages to absorb; the oldest go first. */
const STORE_LIMIT = 50_000;
const RING_CAPACITY = 16_384;

export interface ForkWatch {
  /** Watch a task's leader; `absorb` then receives every birth recorded from now on, oldest first. */
  watch(pid: number, absorb: (births: readonly Birth[]) => void): () => void;
  /** Hand out what the thread recorded since the last call; every record kept, by unique id. */
  births(): ReadonlyMap<bigint, Birth>;
}

class KqueueForkWatch implements ForkWatch {
  private readonly store = new Map<bigint, Birth>();
  private readonly read: ReturnType<typeof ringReader>;
  private readonly change = new Uint8Array(2 * KEVENT_SIZE);
  private readonly receipts = new Uint8Array(2 * KEVENT_SIZE);
  /** struct timespec {0, 0}: registration never waits. */
  private readonly noWait = new BigInt64Array(2);

  constructor(private readonly kq: number) {
    const ring = createBirthRing(RING_CAPACITY);
    this.read = ringReader(ring);
    const worker = new Worker(workerScriptUrl("platform/darwin/fork-watch-worker.ts"), { smol: true, workerData: { kq, ring } } as WorkerOptions);
    // A watcher that stopped ({ failed }) or failed records nothing more; lineage stays safe
    // without it (unseen links are uncertain), so there is nothing to do but not crash.
    worker.addEventListener("error", (event) => event.preventDefault());
    // The thread blocks in kevent for the life of the process; it must not keep the process alive.
    worker.unref();
  }

  private readonly followers = new Set<(births: readonly Birth[]) => void>();

  watch(pid: number, absorb: (births: readonly Birth[]) => void): () => void {
    this.followers.add(absorb);
    encodeKEvent(this.change, 0, watchProcess(pid));
    encodeKEvent(this.change, 1, wakeFor(pid));
    // Both changes carry EV_RECEIPT, so the two answers are their receipts, never an event the
    // watcher thread is waiting for.
    libSystem().kevent(this.kq, ptr(this.change), 2, ptr(this.receipts), 2, ptr(this.noWait));
    return () => this.followers.delete(absorb);
  }

  births(): ReadonlyMap<bigint, Birth> {
    const { births } = this.read();
    for (const birth of births) this.store.set(birth.unique, birth);
    // The ring is in recording order, and a child is recorded after its parent: each follower
    // sees a parent before its children, so one pass over the new records is enough.
    if (births.length > 0) for (const absorb of this.followers) absorb(births);
    for (const unique of this.store.keys()) {
      if (this.store.size <= STORE_LIMIT) break;
      this.store.delete(unique);
    }
    return this.store;
  }

}

let shared: ForkWatch | null | undefined;

/** The process's fork watcher, or null where kqueue cannot be had. */
export function forkWatch(): ForkWatch | null {
  if (shared !== undefined) return shared;
  try {
    const kq = libSystem().kqueue();
    shared = kq >= 0 ? new KqueueForkWatch(kq) : null;
  } catch {
    shared = null;
  }
  return shared;
}
