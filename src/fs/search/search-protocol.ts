// Messages and shared-memory layout between search-pool.ts (main thread) and search-worker.ts.
import type { WireChain } from "../ignore/level-wire.ts";
import type { PathPolicy } from "../policy.ts";
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

/** A find_files directory on the wire (./find-walk.ts's FindDir with its ignore level encoded). */
export interface WireDir {
  parts: string[];
  rel: string;
  sub: string;
  level: WireChain;
}

/** What a find_files unit needs of its call: the same for every unit of one call. */
export interface FindUnitSpec {
  /** The workdir root, held open by the main thread for the workdir's lifetime. */
  rootFd: number;
  /** Opens below it refuse to cross a mount (cross_mounts = false). */
  noXdev: boolean;
  alias: string;
  rel: string;
  /** The workdir's PathPolicy, as the worker builds it again. */
  policy: PathPolicy["settings"];
  /** Ignore files are read (the call's walk has rules). */
  ignoreFiles: boolean;
  pattern: string;
  exclude: string[] | null;
  maxWalk: number;
  limit: number;
  /** Entries a unit walks before it hands back the directories it has not reached. */
  cap: number;
  /** The call's deadline on the shared wall clock (Date.now()). */
  deadline: number;
}

/**
 * What the worker saw in one unit, each event marked with the unit's entry count when it
 * happened, so the main thread can replay the unit as if it had walked it at its own count
 * (./find-units.ts).
 */
export interface UnitLog {
  /** Entries walked (toward max_walk_entries). */
  walked: number;
  /** The unit stopped on its own max_walk_entries or limit, at entry `walked`. */
  stopped: boolean;
  matches: string[];
  matchAt: number[];
  ignoredAt: number[];
  /** Per ignore-file warning raised; the texts of the first MAX_WARNINGS. */
  warnAt: number[];
  warnTexts: string[];
  /** The directories the unit did not reach (its cap), in walk order. */
  rest: WireDir[];
  /** RESOURCE_EXHAUSTED or SEARCH_TIMEOUT, raised after `walked` entries. */
  error: "RESOURCE_EXHAUSTED" | "SEARCH_TIMEOUT" | null;
}

export type ToWorker =
  | { type: "init"; sab: SharedArrayBuffer; findPort: MessagePort }
  | { type: "find-unit"; id: number; slot: number; seq: number; spec: FindUnitSpec; dir: WireDir }
  | { type: "batch"; id: number; slot: number; seq: number; spec: ScanSpec; params: BatchParams; groups: WireGroup[] }
  | { type: "end"; id: number }
  /** Tests: die (an uncaught error) on the next batch instead of answering it. */
  | { type: "crash-next" }
  /** Tests: on the next batch or find unit, stay busy (as with a huge file) until that call is cancelled. */
  | { type: "stall-next" }
  /** Tests: on the next find unit, block until the thread is ended, cancelled or not. */
  | { type: "hang-next" };

export type FromWorker =
  | { type: "ready" }
  | { type: "done"; id: number; seq: number; matches: SearchMatch[]; exhausted: boolean; unreadable: number }
  | { type: "cancelled"; id: number; seq: number }
  | { type: "failed"; id: number; seq: number };

/** Through the find port, which the main thread reads without waiting for its event loop. */
export type FromFindUnit =
  | { type: "unit-done"; id: number; seq: number; log: UnitLog }
  /** Cancelled, or failed for a reason of the worker's own: the main thread walks the unit itself. */
  | { type: "unit-dropped"; id: number; seq: number };
