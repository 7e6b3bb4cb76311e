// Messages and shared-memory layout between search-pool.ts (main thread) and search-worker.ts.
import type { SearchMatch } from "./scan-types.ts";
import type { BatchGroup, BatchParams, ScanSpec } from "./search-batch.ts";

/**
 * A BatchGroup as it crosses to the worker: its names joined by NUL (which no file name holds).
 * One string clones as one copy; an array of 256 names cloned string by string.
 */
export type WireGroup = Omit<BatchGroup, "names"> & { names: string };

export function toWire(g: BatchGroup): WireGroup {
  return { dirFd: g.dirFd, noXdev: g.noXdev, prefix: g.prefix, names: g.names.join("\0") };
}

export function fromWire(g: WireGroup): BatchGroup {
  return { dirFd: g.dirFd, noXdev: g.noXdev, prefix: g.prefix, names: g.names === "" ? [] : g.names.split("\0") };
}

/** Searches that may use the worker at once (a slot each); more run on the main thread alone. */
export const SLOTS = 32;
/** Int32 words of the shared buffer: [0, SLOTS) the id of a search cancelled in that slot; [DONE_BASE, +SLOTS) batches the worker finished per slot; READY. */
export const DONE_BASE = SLOTS;
/** Set to 1 by the worker once it takes batches: read without waiting for its "ready" message. */
export const READY = 2 * SLOTS;
export const SHARED_WORDS = 2 * SLOTS + 1;

export type ToWorker =
  | { type: "init"; sab: SharedArrayBuffer }
  | { type: "batch"; id: number; slot: number; seq: number; spec: ScanSpec; params: BatchParams; groups: WireGroup[] }
  | { type: "end"; id: number }
  /** Tests: die (an uncaught error) on the next batch instead of answering it. */
  | { type: "crash-next" }
  /** Tests: on the next batch, stay busy (as with a huge file) until that search is cancelled. */
  | { type: "stall-next" };

export type FromWorker =
  | { type: "ready" }
  | { type: "done"; id: number; seq: number; matches: SearchMatch[]; exhausted: boolean; unreadable: number }
  | { type: "cancelled"; id: number; seq: number }
  | { type: "failed"; id: number; seq: number };
