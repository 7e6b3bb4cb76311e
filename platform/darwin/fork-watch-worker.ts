// The fork watcher's thread (started by fork-watch.ts). It blocks in kevent(2) on the kqueue the
// main thread registers each task leader on. When a watched process forks it lists that process's
// children at once (proc_listchildpids, which includes zombies), records each new child's lineage
// ids, watches the child in turn and lists the child's own children: a child is recorded while its
// parent still lives, before the parent can exit and leave it to launchd. A process forked and
// gone between the report and the listing is simply not recorded; its orphans are then uncertain
// to TaskLineage, which never lets them be proved gone.
import { ptr } from "bun:ffi";
import { parentPort, workerData } from "node:worker_threads";
import { ringWriter, type BirthRing } from "./birth-ring.ts";
import { decodeKEvent, encodeKEvent, EV_ERROR, EVFILT_PROC, EVFILT_USER, KEVENT_SIZE, NOTE_EXEC, NOTE_FORK, watchProcess } from "./kevent.ts";
import { darwinErrno, libSystem } from "./libsystem.ts";
import { UNIQ_IDENTIFIER_INFO_SIZE, uniqueIdsOf } from "./unique-ids.ts";
import { normalJitPolicy } from "../jit-policy.ts";

const { kq, ring } = workerData as { kq: number; ring: BirthRing };
const write = ringWriter(ring);
const sys = libSystem();
const BATCH = 64;
const events = new Uint8Array(BATCH * KEVENT_SIZE);
const change = new Uint8Array(KEVENT_SIZE);
const receipt = new Uint8Array(KEVENT_SIZE);
const scratch = new Uint8Array(UNIQ_IDENTIFIER_INFO_SIZE);
let children = new Int32Array(256);
/** Unique ids already recorded (cleared when large: a second record of a process is harmless). */
let recorded = new Set<bigint>();

function watch(pid: number): void {
  encodeKEvent(change, 0, watchProcess(pid));
  // EV_RECEIPT: the answer is the registration's own status; a process already gone says ESRCH.
  sys.kevent(kq, ptr(change), 1, ptr(receipt), 1, null);
}

function childrenOf(pid: number): Int32Array {
  for (;;) {
    const count = sys.proc_listchildpids(pid, ptr(children), children.byteLength);
    if (count < 0) return new Int32Array(0);
    if (count < children.length) return children.subarray(0, count);
    children = new Int32Array(children.length * 2);
  }
}

/** Record and watch every descendant of `root` not recorded yet, depth first. */
function recordDescendants(root: number): void {
  const stack = [root];
  while (stack.length > 0) {
    const parent = stack.pop()!;
    for (const child of [...childrenOf(parent)]) {
      if (child <= 0) continue;
      const ids = uniqueIdsOf(child, scratch);
      if (ids === null || recorded.has(ids.unique)) continue;
      if (recorded.size > 100_000) recorded = new Set();
      recorded.add(ids.unique);
      // Watch first, then list: a fork after the watch is reported, one before it is listed.
      watch(child);
      write({ pid: child, ...ids });
      stack.push(child);
    }
  }
}

const EINTR = 4;
// The loop below runs for the Bridge's life: optimized as usual (../jit-policy.ts).
normalJitPolicy();

for (;;) {
  const got = sys.kevent(kq, null, 0, ptr(events), BATCH, null);
  if (got < 0) {
    if (darwinErrno() === EINTR) continue;
    // The kqueue is unusable: say so, and stop (the main thread then records nothing more).
    parentPort?.postMessage({ failed: true });
    break;
  }
  for (let i = 0; i < got; i++) {
    const event = decodeKEvent(events, i);
    if ((event.flags & EV_ERROR) !== 0) continue;
    const pid = Number(event.ident);
    if (event.filter === EVFILT_USER) recordDescendants(pid);
    else if (event.filter === EVFILT_PROC && (event.fflags & (NOTE_FORK | NOTE_EXEC)) !== 0) {
      // An exec replaces the proc (xnu-10063 and later): watch the new one too; EV_ADD is idempotent.
      if ((event.fflags & NOTE_EXEC) !== 0) watch(pid);
      if ((event.fflags & NOTE_FORK) !== 0) recordDescendants(pid);
    }
  }
}
