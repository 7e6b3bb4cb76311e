// find_files on two threads. The main thread walks the call's tree as always (./find.ts), and
// whenever the search worker can take work it hands it the deepest-pending directory: the one at
// the bottom of the walk's stack, which the main thread would reach last. The worker walks that
// sub-tree (a unit, ./find-unit.ts) while the main thread walks the rest from the top, and the
// stack keeps the unit's place. When the main thread's walk reaches it, the unit's log is replayed
// there, so the answer is the one a single thread gives, byte for byte:
//
// - The main thread's count of entries walked (W) and of matches (M) at the unit's place decide
//   where its walk would stop inside the unit: at the entry that exceeds max_walk_entries
//   (max_walk_entries - W + 1), at the match that exceeds the limit (the unit's (limit - M + 1)th),
//   or where the unit stopped on its own caps, whichever comes first. Everything the log marks
//   before that entry counts (matches, ignored entries, ignore-file warnings); nothing after.
// - A unit stops taking directories after UNIT_CAP entries and hands back those it has not
//   reached, in walk order. They go back on the stack below the unit's log, where the worker may
//   be handed them again: a sub-tree holding most of the tree is split as it is walked.
// - A unit the worker dropped (its thread ended, or a fault of its own) is walked here, from its
//   directory, as if it had never been handed over. Running out of descriptors or time in a unit
//   is the call's RESOURCE_EXHAUSTED or SEARCH_TIMEOUT, if the main thread's walk reaches it.
//
// The worker runs where searches use it (Linux with openat2); elsewhere the walk stays on the
// main thread and nothing here runs.

import { fsNative } from "../../../platform/fs/native.ts";
import { refusesMountCrossing } from "../../../platform/fs/search-port.ts";
import type { Target, Workspace } from "../context.ts";
import { fail } from "../fail.ts";
import type { WalkIgnore } from "../ignore/index.ts";
import { LevelDecoder, LevelEncoder } from "../ignore/level-wire.ts";
import type { WalkClock } from "../walk.ts";
import { dirFromWire, dirToWire, type FindDir } from "./find-walk.ts";
import { activeSearchPool, type FindListener, WORKER_CANCEL_GRACE_MS } from "./search-pool.ts";

type Pool = NonNullable<ReturnType<typeof activeSearchPool>>;
import { DONE_BASE, type FindUnitSpec, type FromFindUnit, type UnitLog } from "./search-protocol.ts";

/** A directory handed to the worker, in its place on the walk's stack. */
export interface Unit {
  readonly unit: true;
  readonly dir: FindDir;
  readonly seq: number;
  state: "pending" | "done" | "dropped";
  log: UnitLog | null;
  /** Its `rest` is on the stack already, below it. */
  expanded: boolean;
}

export type WalkItem = FindDir | Unit;

export function isUnit(item: WalkItem): item is Unit {
  return (item as Partial<Unit>).unit === true;
}

/** Units the worker may hold at once: one walked, one waiting, so it never idles between them. */
const DEPTH = 2;
/**
 * Entries a unit walks before it hands back what it has not reached. Small enough that the last
 * unit the main thread waits for is short (about 15 ms of walking here), large enough that the
 * round trips (a message each way, tens of microseconds) stay below 1 % of the walk.
 */
const UNIT_CAP = 16_384;
let unitCap = UNIT_CAP;
/** How long one wait for the worker lasts before the walk looks again (a thread that ended wakes nobody). */
const WAIT_SLICE_MS = 50;

/** Tests: the unit cap (entries), to split small trees as a big one is; no argument restores it. */
export function setFindUnitCap(entries = UNIT_CAP): void {
  unitCap = entries;
}

let lockstep = false;

/**
 * Tests: after handing the worker a unit, the main thread waits for its answer before it walks
 * on. How many units the worker gets then depends on the tree alone, not on which thread is
 * faster, so a test can require that the worker took part.
 */
export function setFindLockstep(on: boolean): void {
  lockstep = on;
}

export interface FindCall {
  pattern: string;
  exclude: readonly string[] | null;
  limit: number;
  ignore: WalkIgnore | null;
}

export class FindUnits implements FindListener {
  /** Units handed to the worker, and answered; for tests and benchmarks. */
  static readonly counts = { sent: 0, done: 0, dropped: 0 };
  private readonly pending = new Map<number, Unit>();
  private readonly encoder = new LevelEncoder();
  private readonly decoder: LevelDecoder;
  private readonly spec: FindUnitSpec;
  private id = 0;
  private slot = 0;
  private seq = 0;
  private dead = false;
  /** setFindLockstep: the unit the walk waits for before it goes on. */
  private awaited: Unit | null = null;

  /**
   * The worker's share of one call, or null when it has no worker to share with right now, or
   * when the workspace walks through another backend than the platform's own (the worker walks
   * with the platform's, and a test's backend must see the whole walk).
   */
  static begin(ws: Workspace, t: Target, clock: WalkClock, call: FindCall): FindUnits | null {
    const pool = activeSearchPool();
    if (pool === null || ws.native !== fsNative()) return null;
    if (!pool.isReady()) {
      // this call walks alone; the next one finds the thread up (serve starts it at boot anyway)
      void pool.whenReady();
      return null;
    }
    const u = new FindUnits(pool, ws, t, clock, call);
    const got = pool.beginFind(u);
    if (got === null) return null;
    u.id = got.id;
    u.slot = got.slot;
    return u;
  }

  private constructor(
    /** The pool this call began with, to its end, whatever tests switch meanwhile. */
    private readonly pool: Pool,
    ws: Workspace,
    t: Target,
    clock: WalkClock,
    call: FindCall,
  ) {
    const rootFd = ws.rootFd(t);
    this.decoder = new LevelDecoder(t.wd.policy.caseInsensitive);
    this.spec = {
      rootFd,
      noXdev: refusesMountCrossing(rootFd),
      alias: t.alias,
      rel: t.rel,
      policy: t.wd.policy.settings,
      ignoreFiles: call.ignore !== null,
      pattern: call.pattern,
      exclude: call.exclude === null ? null : [...call.exclude],
      maxWalk: ws.registry.limits.max_walk_entries,
      limit: call.limit,
      cap: unitCap,
      deadline: clock.deadlineEpochMs(),
    };
  }

  answered(m: FromFindUnit): void {
    const u = this.pending.get(m.seq);
    if (u === undefined) return;
    this.pending.delete(m.seq);
    if (m.type === "unit-done") {
      u.state = "done";
      u.log = m.log;
      FindUnits.counts.done++;
    } else {
      u.state = "dropped";
      FindUnits.counts.dropped++;
    }
  }

  gone(): void {
    this.dead = true;
    for (const u of this.pending.values()) u.state = "dropped";
    FindUnits.counts.dropped += this.pending.size;
    this.pending.clear();
  }

  private canTake(): boolean {
    return !this.dead && this.pending.size < DEPTH && this.pool.isReady();
  }

  /**
   * Before the main thread takes its next directory: take in what the worker answered, put a
   * finished unit's unreached directories back in its place, and hand the worker the deepest
   * pending directories while it has room, always leaving the main thread at least the top one.
   * Null, or (setFindLockstep) a promise to await before walking on.
   */
  offer(stack: WalkItem[]): Promise<void> | null {
    this.pool.pollFinds();
    if (this.awaited !== null && this.awaited.state === "pending" && !this.dead) return this.wait(this.awaited);
    this.awaited = null;
    let posted: Unit | null = null;
    for (let i = 0; i < stack.length; i++) {
      const item = stack[i] as WalkItem;
      if (!isUnit(item)) {
        if (i >= stack.length - 1 || !this.canTake()) break;
        stack[i] = posted = this.post(item);
        continue;
      }
      if (item.state === "done" && !item.expanded) {
        item.expanded = true;
        const rest = this.rest(item.log as UnitLog);
        if (rest.length > 0) stack.splice(i, 0, ...rest.reverse());
        i--; // look at what now fills this place
      }
    }
    if (lockstep && posted !== null) this.awaited = posted;
    // one wait at a time, so the walk reads its clock (and its cancellation) between them
    return this.awaited !== null && this.awaited.state === "pending" && !this.dead ? this.wait(this.awaited) : null;
  }

  /** A finished unit's unreached directories, in walk order, ready to walk on this thread. */
  rest(log: UnitLog): FindDir[] {
    return log.rest.map((d) => dirFromWire(d, this.decoder));
  }

  private post(dir: FindDir): Unit {
    const seq = ++this.seq;
    const u: Unit = { unit: true, dir, seq, state: "pending", log: null, expanded: false };
    this.pending.set(seq, u);
    FindUnits.counts.sent++;
    void this.pool
      .send({ type: "find-unit", id: this.id, slot: this.slot, seq, spec: this.spec, dir: dirToWire(dir, this.encoder) }, null)
      .catch(() => this.gone());
    return u;
  }

  /** Resolves once the worker has answered something more (or after a slice, to look again). */
  wait(u: Unit): Promise<void> {
    return this.slice(() => u.state !== "pending");
  }

  /**
   * Take in the worker's answers; unless `settled` then holds, wait for its next answer, one
   * slice at most. The count is read before the port, so an answer posted in between wakes it.
   */
  private async slice(settled: () => boolean): Promise<void> {
    const pool = this.pool;
    const seen = Atomics.load(pool.flags, DONE_BASE + this.slot);
    pool.pollFinds();
    if (settled() || this.dead) return;
    await Atomics.waitAsync(pool.flags, DONE_BASE + this.slot, seen, WAIT_SLICE_MS).value;
  }

  /**
   * The call is over: the worker drops what it still holds, and the slot is free once it has. A
   * worker that does not give its units back within WORKER_CANCEL_GRACE_MS (stuck in a read that
   * never returns) is ended, as a search's is, and the next call starts a new one.
   */
  async end(): Promise<void> {
    const pool = this.pool;
    if (this.pending.size > 0) {
      Atomics.store(pool.flags, this.slot, this.id);
      Atomics.notify(pool.flags, this.slot);
      const giveUpAt = performance.now() + WORKER_CANCEL_GRACE_MS;
      while (this.pending.size > 0 && !this.dead) {
        if (performance.now() > giveUpAt) {
          await pool.kill(); // its close drops every unit (gone())
          break;
        }
        await this.slice(() => this.pending.size === 0);
      }
    }
    pool.endFind(this.id, this.slot);
  }
}

/** A unit's log replayed into the main thread's walk at its place. */
export interface Replay {
  matches: string[];
  walked: number;
  ignored: number;
  /** The walk stops inside the unit (truncated). */
  stops: boolean;
}

/**
 * Where the main thread's walk, at `walked` entries and `matched` matches, would stop inside the
 * unit, and what it would have counted before: see the head of this file. Throws the unit's
 * RESOURCE_EXHAUSTED or SEARCH_TIMEOUT when the walk reaches it; warnings go to `ignore`.
 */
export function replay(log: UnitLog, walked: number, matched: number, maxWalk: number, limit: number, ignore: WalkIgnore | null, t: Target): Replay {
  let cut = maxWalk - walked + 1;
  const room = limit - matched;
  if (room < log.matchAt.length) cut = Math.min(cut, log.matchAt[room] as number);
  if (log.stopped) cut = Math.min(cut, log.walked);
  const stops = cut <= log.walked;
  if (log.error === "SEARCH_TIMEOUT") throw fail("SEARCH_TIMEOUT", t.alias, t.rel);
  if (log.error !== null && !stops) throw fail(log.error, t.alias, t.rel);
  const before = (at: readonly number[]): number => {
    let n = 0;
    while (n < at.length && (at[n] as number) < cut) n++;
    return n;
  };
  if (ignore !== null) {
    const warned = before(log.warnAt);
    for (let i = 0; i < warned; i++) ignore.absorbWarning(log.warnTexts[i] ?? null);
  }
  const kept = before(log.matchAt);
  return {
    matches: kept === log.matches.length ? log.matches : log.matches.slice(0, kept),
    walked: stops ? cut : log.walked,
    ignored: before(log.ignoredAt),
    stops,
  };
}
