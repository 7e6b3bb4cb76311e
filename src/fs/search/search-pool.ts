// The main thread's side of the search worker: one Bun Worker per process, started once serve is
// up (startSearchWorker, while serve loads) or else by the first search that can use it, and
// kept for later searches, unref'd so it never holds the process open. Work goes out in batches
// (search-batch.ts), one message each way per batch;
// each search holds a slot in a small shared Int32Array where it posts its cancellation and where
// the worker counts finished batches, so the main thread knows how busy the worker is without
// waiting for a message. If the thread dies (crash, terminate) every unanswered batch is rejected
// with WorkerGone and the next search starts a fresh worker.
//
// The worker only ever opens files below directory descriptors the main thread opened, verified
// and keeps open until the batch is answered or the thread is gone, so a descriptor number the
// worker holds can never be closed and reused under it.

import fs from "node:fs";
import { MessageChannel, type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import { workerOpener } from "../../../platform/fs/search-port.ts";
import { workerScriptUrl } from "../../../platform/embedded-worker.ts";
import type { BatchGroup, BatchParams, BatchResult, ScanSpec } from "./search-batch.ts";
import { DONE_BASE, READY, SHARED_WORDS, SLOTS, toWire, type FromFindUnit, type FromWorker, type ToWorker } from "./search-protocol.ts";

/** A find_files call's use of the worker (./find-units.ts), as the pool routes its answers. */
export interface FindListener {
  answered(m: FromFindUnit): void;
  /** The thread ended: nothing more will come for what was sent to it. */
  gone(): void;
}

/** The worker thread ended (crashed or was terminated) before it answered a batch. */
export class WorkerGone extends Error {}

interface Pending {
  resolve: (r: BatchResult | null) => void;
  reject: (e: Error) => void;
}

/** Descriptors that must be free before a worker thread is started (it takes a few itself). */
const START_HEADROOM = 32;

function descriptorHeadroom(n: number): boolean {
  const fds: number[] = [];
  try {
    for (let i = 0; i < n; i++) fds.push(fs.openSync("/dev/null", "r"));
    return true;
  } catch {
    return false;
  } finally {
    for (const fd of fds) fs.closeSync(fd);
  }
}

/** After a cancel, how long the worker may take to give back a search's batch or a find's unit before it is ended. */
export const WORKER_CANCEL_GRACE_MS = 2000;

/** Batches the worker may hold at once per search: one being scanned, one waiting, so it never idles. */
const DEPTH = 2;

class SearchPool {
  private worker: Worker | null = null;
  private ready = false;
  /** The worker could not be started here (no entry point, startup error): main thread only from now on. */
  private broken = false;
  private readonly sab = new SharedArrayBuffer(SHARED_WORDS * 4);
  readonly flags = new Int32Array(this.sab);
  private readonly free: number[] = Array.from({ length: SLOTS }, (_, i) => SLOTS - 1 - i);
  private readonly pending = new Map<string, Pending>();
  private nextId = 1;
  /** Batches the worker answered (done, cancelled), for tests and benchmarks. */
  readonly answered = { done: 0, cancelled: 0 };
  private readyWaiters: ((up: boolean) => void)[] = [];
  /** Resolved whenever the current thread has ended (for kill()). */
  private gone: Promise<void> = Promise.resolve();
  /**
   * find_files units answer through a port of their own, which the walking main thread reads
   * between directories (receiveMessageOnPort) instead of waiting for its event loop to turn.
   */
  private findPort: MessagePort | null = null;
  private readonly finds = new Map<number, FindListener>();

  /** A slot and id for one find_files call; null when the worker cannot take work now. */
  beginFind(listener: FindListener): { id: number; slot: number } | null {
    if (this.broken || this.free.length === 0 || !this.isReady()) return null;
    const slot = this.free.pop() as number;
    Atomics.store(this.flags, slot, 0);
    Atomics.store(this.flags, DONE_BASE + slot, 0);
    const id = this.nextId++;
    this.finds.set(id, listener);
    return { id, slot };
  }

  /** After every unit of the call is settled. */
  endFind(id: number, slot: number): void {
    if (!this.finds.delete(id)) return;
    this.release(slot);
    void this.send({ type: "end", id }, null).catch(() => {});
  }

  /** Hand every find answer that has arrived to its call, without waiting. */
  pollFinds(): void {
    const port = this.findPort;
    if (port === null) return;
    for (let got = receiveMessageOnPort(port); got !== undefined; got = receiveMessageOnPort(port)) {
      const m = got.message as FromFindUnit;
      this.finds.get(m.id)?.answered(m);
    }
  }

  begin(spec: ScanSpec, params: BatchParams): PoolSession | null {
    if (this.broken || this.free.length === 0) return null;
    if (this.worker === null && !this.start()) return null;
    const slot = this.free.pop() as number;
    Atomics.store(this.flags, slot, 0);
    Atomics.store(this.flags, DONE_BASE + slot, 0);
    return new PoolSession(this, this.nextId++, slot, spec, params);
  }

  /** The worker takes batches: known from shared memory as soon as it is up, before its "ready" message is read. */
  isReady(): boolean {
    return this.worker !== null && Atomics.load(this.flags, READY) === 1;
  }

  send(m: ToWorker, key: string | null): Promise<BatchResult | null> {
    const w = this.worker;
    if (w === null) return Promise.reject(new WorkerGone());
    if (key === null) {
      w.postMessage(m);
      return Promise.resolve(null);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(key, { resolve, reject });
      w.postMessage(m);
    });
  }

  release(slot: number): void {
    this.free.push(slot);
  }

  /** End the thread (a hung worker, tests); unanswered batches are rejected once it has stopped. */
  async kill(): Promise<void> {
    const w = this.worker;
    if (w === null) return;
    const gone = this.gone;
    w.terminate();
    await gone;
  }

  /** Start the worker if it is not running and wait until it takes batches; false if it cannot run here. */
  whenReady(): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (this.broken || (this.worker === null && !this.start())) return Promise.resolve(false);
    return new Promise((r) => this.readyWaiters.push(r));
  }

  /** Tests: the worker dies on its next batch. */
  crashNext(): void {
    void this.send({ type: "crash-next" }, null).catch(() => {});
  }

  /** Tests: the worker stays busy on its next batch or find unit until that call is cancelled. */
  stallNext(): void {
    void this.send({ type: "stall-next" }, null).catch(() => {});
  }

  /** Tests: the worker never comes back from its next find unit (a read that never returns). */
  hangNext(): void {
    void this.send({ type: "hang-next" }, null).catch(() => {});
  }

  /** Batches handed to the worker and not answered yet. */
  inFlight(): number {
    return this.pending.size;
  }

  private start(): boolean {
    // A new thread needs descriptors of its own (its event loop), and Bun ends the whole process
    // if it cannot get them: with the table nearly full, this search stays on the main thread
    // (which then reports RESOURCE_EXHAUSTED itself) and a later one tries again.
    if (!descriptorHeadroom(START_HEADROOM)) return false;
    let w: Worker;
    try {
      // smol: a heap tuned for size, and this one holds little (a scanner, one batch at a time)
      w = new Worker(workerUrl(), { smol: true });
    } catch {
      this.broken = true;
      return false;
    }
    this.worker = w;
    this.ready = false;
    const channel = new MessageChannel();
    channel.port1.unref();
    this.findPort = channel.port1;
    Atomics.store(this.flags, READY, 0);
    let ended!: () => void;
    this.gone = new Promise<void>((r) => (ended = r));
    w.onmessage = (e: MessageEvent<FromWorker>) => {
      const m = e.data;
      if (m.type === "ready") {
        this.ready = true;
        for (const r of this.readyWaiters.splice(0)) r(true);
        return;
      }
      const key = `${m.id}:${m.seq}`;
      const p = this.pending.get(key);
      if (p === undefined) return;
      this.pending.delete(key);
      if (m.type === "done") {
        this.answered.done++;
        p.resolve({ matches: m.matches, exhausted: m.exhausted, unreadable: m.unreadable });
      } else if (m.type === "cancelled") {
        this.answered.cancelled++;
        p.resolve(null);
      }
      else p.reject(new WorkerGone());
    };
    // An uncaught error ends the worker; "close" follows once the thread has really stopped,
    // and only then may the descriptors its batches named be closed.
    w.addEventListener("error", () => {
      if (!this.ready) this.broken = true;
      w.terminate();
    });
    w.addEventListener("close", () => {
      if (this.worker === w) {
        this.worker = null;
        this.ready = false;
        Atomics.store(this.flags, READY, 0);
        this.findPort?.close();
        this.findPort = null;
        const finds = [...this.finds.values()];
        for (const f of finds) f.gone();
      }
      const all = [...this.pending.values()];
      this.pending.clear();
      for (const p of all) p.reject(new WorkerGone());
      for (const r of this.readyWaiters.splice(0)) r(false);
      ended();
    });
    w.unref();
    w.postMessage({ type: "init", sab: this.sab, findPort: channel.port2 } satisfies ToWorker, [channel.port2]);
    return true;
  }
}

/** One search's use of the worker. */
export class PoolSession {
  private sent = 0;
  private ended = false;

  constructor(
    private readonly pool: SearchPool,
    private readonly id: number,
    private readonly slot: number,
    private readonly spec: ScanSpec,
    private readonly params: BatchParams,
  ) {}

  /** Whether the worker is up and has room for another batch of this search. */
  canTake(): boolean {
    return !this.ended && this.pool.isReady() && this.sent - Atomics.load(this.pool.flags, DONE_BASE + this.slot) < DEPTH;
  }

  /** Resolves once the worker takes batches (true), or when it cannot run (false). */
  whenReady(): Promise<boolean> {
    return this.pool.whenReady();
  }

  /** Hand a batch to the worker: its result, or null if the search was cancelled before it finished. */
  post(seq: number, groups: BatchGroup[]): Promise<BatchResult | null> {
    this.sent++;
    return this.pool.send({ type: "batch", id: this.id, slot: this.slot, seq, spec: this.spec, params: this.params, groups: groups.map(toWire) }, `${this.id}:${seq}`);
  }

  /** The worker skips this search's remaining work: checked before every file and after every buffer. */
  cancel(): void {
    Atomics.store(this.pool.flags, this.slot, this.id);
    Atomics.notify(this.pool.flags, this.slot);
  }

  /** After every batch is settled: free the slot and the worker's scanner for this search. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.pool.release(this.slot);
    void this.pool.send({ type: "end", id: this.id }, null).catch(() => {});
  }

  kill(): Promise<void> {
    return this.pool.kill();
  }
}

/**
 * Where the worker's entry point is. From source it sits next to this file. In the compiled
 * executable this module is part of the main bundle, whose URL is the embedded root's executable
 * name, and build/compile.ts embeds the worker at its path below src/: an absolute in-executable
 * URL, so a missing entry point fails to start (and searches stay on the main thread) instead of
 * ever being looked up on disk.
 */
function workerUrl(): URL {
  return workerScriptUrl("src/fs/search/search-worker.ts");
}

let pool: SearchPool | null = null;

/** The process's search worker pool, or null where searches stay on the main thread (the platform has no worker opener). */
export function searchPool(): SearchPool | null {
  // (pool.begin() starts the worker lazily: nothing here runs before the first search)
  if (workerOpener() === null) return null;
  pool ??= new SearchPool();
  return pool;
}

/**
 * Start the worker now, without waiting for it, where searches use one. serve calls this as soon
 * as the file layer is loaded, before the MCP SDK and the tools: a thread started by the first
 * search came up while that search kept both cores busy and took 25-30 ms to take its first batch;
 * started once serve's start-up was done it still held the first search's first batch 1-12 ms;
 * started during the load it comes up on the core the single-threaded load leaves idle, and the
 * first search has both threads from its start. Cost: one idle thread, ~7 MB resident, in every
 * serve process whether or not it ever searches.
 */
export function startSearchWorker(): void {
  if (enabled) void searchPool()?.whenReady();
}

let enabled = true;

/** Tests: run searches on the main thread alone (false) or with the worker (true, the default). */
export function setSearchWorkerEnabled(on: boolean): void {
  enabled = on;
}

/** The pool searches may use now: null while disabled. */
export function activeSearchPool(): SearchPool | null {
  return enabled ? searchPool() : null;
}
