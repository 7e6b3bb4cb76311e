// The search worker's entry point (started lazily by search-pool.ts; a separate entry point of
// the compiled executable, build/compile.ts). It receives batches of (directory descriptor, file
// names) that the main thread opened and verified, opens each file below its descriptor with
// openat2 (RESOLVE_BENEATH, no symlinks, RESOLVE_NO_XDEV where the workdir asks for it), scans it
// with the same Scanner as the main thread and answers with the batch's matches only. It never
// closes a directory descriptor: the main thread does, once the batch's answer arrived.
// Cancellation arrives through shared memory (a message would wait behind the batch being
// scanned): the Pace checks it before every file and after every buffer.
// It also walks find_files units, sub-trees below a workdir root the main thread holds open
// (./find-unit.ts), opening every directory with openat2 beneath that root, and answers them
// through the find port; a unit checks the same cancellation word before every directory.

import { edenGC } from "bun:jsc";
import { workerOpener, workerWalkNative } from "../../../platform/fs/search-port.ts";
import { BUFFER_BYTES, type Scanner } from "./scan.ts";
import type { Pace } from "./scan-types.ts";
import { BatchCancelled, makeScanner, scanBatch } from "./search-batch.ts";
import { DONE_BASE, fromWire, READY, type FromFindUnit, type FromWorker, type ToWorker } from "./search-protocol.ts";
import { keepScanBelowFtl } from "./scan-tiers.ts";
import { keepWalkBelowFtl } from "./walk-tiers.ts";
import { forgetFindCall, walkUnit } from "./find-unit.ts";
import { normalJitPolicy } from "../../../platform/jit-policy.ts";

declare const self: Worker;

// The pool starts this thread only where the platform has a worker opener (search-pool.ts); should
// it start anywhere else, the thread fails at once and the pool scans every batch itself.
const found = workerOpener();
if (found === null) throw new Error("search worker: this platform has no worker opener");
const opener = found;

// before the first batch or unit: see scan-tiers.ts
keepScanBelowFtl();
keepWalkBelowFtl();
// This thread's boot is over: its scans and walks are optimized as usual (platform/jit-policy.ts).
normalJitPolicy();

let flags: Int32Array | null = null;
let findPort: MessagePort | null = null;
const scanners = new Map<number, Scanner>();
// One read buffer for every search: batches run one at a time here, and a scan never keeps
// bytes in it from one file to the next.
const shared = Buffer.allocUnsafe(BUFFER_BYTES);
type Work = Extract<ToWorker, { type: "batch" | "find-unit" }>;
const queue: Work[] = [];
let running = false;
let crashNext = false;
/** Files scanned between young collections: each leaves a stat result, a view and a path behind. */
const GC_EVERY_FILES = 4096;
let filesSinceGc = 0;
let stallNext = false;
let hangNext = false;

function reply(m: FromWorker): void {
  self.postMessage(m);
}

class SharedPace implements Pace {
  constructor(
    private readonly id: number,
    private readonly slot: number,
  ) {}
  tick(): boolean {
    if (Atomics.load(flags as Int32Array, this.slot) === this.id) throw new BatchCancelled();
    return false;
  }
  async pause(): Promise<void> {}
}

/** Tests (stall-next): hold this piece of work until its call is cancelled. */
function stallIfAsked(f: Int32Array, slot: number, id: number): void {
  if (!stallNext) return;
  stallNext = false;
  while (Atomics.load(f, slot) !== id) Atomics.wait(f, slot, Atomics.load(f, slot), 50);
}

async function run(b: Extract<ToWorker, { type: "batch" }>): Promise<void> {
  const f = flags as Int32Array;
  stallIfAsked(f, b.slot, b.id);
  try {
    let scanner = scanners.get(b.id);
    if (scanner === undefined) {
      scanner = makeScanner(b.spec, shared);
      scanners.set(b.id, scanner);
    }
    const groups = b.groups.map(fromWire);
    const r = await scanBatch(groups, scanner, b.params, opener.openRead, opener.close, new SharedPace(b.id, b.slot));
    filesSinceGc += groups.reduce((n, g) => n + g.names.length, 0);
    if (filesSinceGc >= GC_EVERY_FILES) {
      filesSinceGc = 0;
      edenGC();
    }
    Atomics.add(f, DONE_BASE + b.slot, 1);
    reply({ type: "done", id: b.id, seq: b.seq, matches: r.matches, exhausted: r.exhausted, unreadable: r.unreadable });
  } catch (err) {
    Atomics.add(f, DONE_BASE + b.slot, 1);
    if (err instanceof BatchCancelled) reply({ type: "cancelled", id: b.id, seq: b.seq });
    else reply({ type: "failed", id: b.id, seq: b.seq });
  }
}

/** One find_files unit (./find-unit.ts): its log through the find port, then the slot's count. */
async function runUnit(u: Extract<ToWorker, { type: "find-unit" }>): Promise<void> {
  const f = flags as Int32Array;
  stallIfAsked(f, u.slot, u.id);
  // blocks this thread for good: only terminate() ends it
  while (hangNext) Atomics.wait(f, READY, 1, 1000);
  let answer: FromFindUnit = { type: "unit-dropped", id: u.id, seq: u.seq };
  try {
    const native = workerWalkNative(u.spec.rootFd, u.spec.noXdev);
    if (native !== null) answer = { type: "unit-done", id: u.id, seq: u.seq, log: await walkUnit(u.id, u.spec, u.dir, native, () => Atomics.load(f, u.slot) === u.id) };
  } catch {
    // cancelled, or a fault of this thread's own: dropped, and the main thread walks the unit itself
  }
  findPort?.postMessage(answer);
  // after the answer is posted, so a main thread woken by the count finds it on the port
  Atomics.add(f, DONE_BASE + u.slot, 1);
  Atomics.notify(f, DONE_BASE + u.slot);
}

async function drain(): Promise<void> {
  running = true;
  try {
    for (let w = queue.shift(); w !== undefined; w = queue.shift()) {
      if (crashNext) {
        setTimeout(() => {
          throw new Error("search worker crash requested");
        });
        await new Promise(() => {}); // never answers: the thread ends first
      }
      await (w.type === "batch" ? run(w) : runUnit(w));
    }
  } finally {
    running = false;
  }
}

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  if (m.type === "init") {
    flags = new Int32Array(m.sab);
    findPort = m.findPort;
    Atomics.store(flags, READY, 1);
    reply({ type: "ready" });
  } else if (m.type === "batch" || m.type === "find-unit") {
    queue.push(m);
    if (!running) void drain();
  } else if (m.type === "end") {
    scanners.get(m.id)?.release();
    scanners.delete(m.id);
    forgetFindCall(m.id);
    // A search leaves garbage here (stat results, paths, and the batch messages, whose serialized
    // bytes live outside the JS heap). This heap stays a few MB, so its collector rarely runs on
    // its own and those bytes piled up (~0.5 MB per search); a full collection of so small a heap
    // costs well under a millisecond.
    Bun.gc(true);
  } else if (m.type === "crash-next") {
    crashNext = true;
  } else if (m.type === "stall-next") {
    stallNext = true;
  } else if (m.type === "hang-next") {
    hangNext = true;
  }
};
