// Messages and shared-memory layout between search-pool.ts (main thread) and search-worker.ts.
import type { SearchMatch } from "./scan.ts";
import type { BatchGroup, BatchParams, ScanSpec } from "./search-batch.ts";

/** Searches that may use the worker at once (a slot each); more run on the main thread alone. */
export const SLOTS = 32;
/** Int32 words of the shared buffer: [0, SLOTS) the id of a search cancelled in that slot; [DONE_BASE, +SLOTS) batches the worker finished per slot; READY. */
export const DONE_BASE = SLOTS;
/** Set to 1 by the worker once it takes batches: read without waiting for its "ready" message. */
export const READY = 2 * SLOTS;
export const SHARED_WORDS = 2 * SLOTS + 1;

export type ToWorker =
  | { type: "init"; sab: SharedArrayBuffer }
  | { type: "batch"; id: number; slot: number; seq: number; spec: ScanSpec; params: BatchParams; groups: BatchGroup[] }
  | { type: "end"; id: number }
  /** Tests: die (an uncaught error) on the next batch instead of answering it. */
  | { type: "crash-next" }
  /** Tests: on the next batch, stay busy (as with a huge file) until that search is cancelled. */
  | { type: "stall-next" };

export type FromWorker =
  | { type: "ready" }
  | { type: "done"; id: number; seq: number; matches: SearchMatch[]; exhausted: boolean }
  | { type: "cancelled"; id: number; seq: number }
  | { type: "failed"; id: number; seq: number };
