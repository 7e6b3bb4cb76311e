// The search worker's side of find_files: walk one sub-tree the main thread handed over (a unit)
// with the same loop the main thread runs (./find-walk.ts), and log what it saw, each event with
// the unit's entry count at that moment. The unit walks as if nothing came before it: its own
// max_walk_entries and limit, never reached before the main thread's, end it early; the main
// thread then cuts the log where its own walk would have stopped (./find-units.ts). After `cap`
// entries the unit stops taking directories and hands back the ones it has not reached, so no
// sub-tree, however large, keeps the other thread idle.

import { ServerfsError } from "../../errors.ts";
import type { FsNative } from "../../../platform/fs/native.ts";
import { compileFnmatch } from "../glob.ts";
import { WalkIgnore } from "../ignore/index.ts";
import { LevelDecoder, LevelEncoder } from "../ignore/level-wire.ts";
import { fail } from "../fail.ts";
import { PathPolicy } from "../policy.ts";
import { compileExclude } from "../walk-filter.ts";
import { WalkClock } from "../walk.ts";
import { dirFromWire, dirToWire, FindWalkLoop, type FindDir, type FindScope } from "./find-walk.ts";
import type { FindUnitSpec, UnitLog, WireDir } from "./search-protocol.ts";

/** The unit's cancellation word was set: the call ended (answered, failed or cancelled). */
class UnitCancelled extends Error {}

class UnitWalk extends FindWalkLoop {
  readonly matches: string[] = [];
  readonly matchAt: number[] = [];
  readonly ignoredAt: number[] = [];
  readonly warnAt: number[] = [];
  /** The directories not reached when the cap was, in walk order. */
  rest: FindDir[] = [];
  private readonly limit: number;
  private readonly cap: number;

  constructor(
    scope: FindScope,
    spec: FindUnitSpec,
    clock: WalkClock,
    ignore: WalkIgnore | null,
    dir: FindDir,
    private readonly cancelled: () => boolean,
  ) {
    super(scope, compileFnmatch(spec.pattern), clock, ignore, compileExclude(scope, spec.exclude ?? undefined), dir, false);
    this.limit = spec.limit;
    this.cap = spec.cap;
  }

  protected nextDir(): FindDir | null {
    if (this.cancelled()) throw new UnitCancelled();
    if (this.walked >= this.cap && this.stack.length > 0) {
      this.rest = this.stack.reverse();
      return null;
    }
    return this.stack.pop() ?? null;
  }

  protected take(path: string): boolean {
    if (this.matches.length === this.limit) return false;
    this.matches.push(path);
    this.matchAt.push(this.walked);
    return true;
  }

  protected override onIgnored(): void {
    this.ignoredAt.push(this.walked);
  }

  protected override onWarned(before: number): void {
    for (let i = before; i < (this.ignore as WalkIgnore).warned; i++) this.warnAt.push(this.walked);
  }
}

/** Per call: its policy compiled once, however many units it sends. */
const policies = new Map<number, PathPolicy>();

/** The worker forgets a call's policy when the call ends. */
export function forgetFindCall(id: number): void {
  policies.delete(id);
}

function policyFor(id: number, spec: FindUnitSpec): PathPolicy {
  let p = policies.get(id);
  if (p === undefined) {
    p = new PathPolicy(spec.policy.rules, spec.policy.options);
    policies.set(id, p);
  }
  return p;
}

/**
 * Walk one unit: its log, or throws UnitCancelled. A fault of the worker's own (anything but
 * the two coded errors a walk raises) is thrown too, and the main thread walks the unit itself.
 */
export async function walkUnit(id: number, spec: FindUnitSpec, wire: WireDir, native: FsNative, cancelled: () => boolean): Promise<UnitLog> {
  const policy = policyFor(id, spec);
  const scope: FindScope = { native, rootFd: spec.rootFd, policy, maxWalk: spec.maxWalk, alias: spec.alias, rel: spec.rel };
  const clock = new WalkClock(scope, Math.max(0, spec.deadline - Date.now()) / 1000, { get aborted() { return cancelled(); } }, "find", 16);
  const ignore = spec.ignoreFiles ? new WalkIgnore(native, spec.rootFd, policy, () => fail("RESOURCE_EXHAUSTED", spec.alias, spec.rel)) : null;
  const walk = new UnitWalk(scope, spec, clock, ignore, dirFromWire(wire, new LevelDecoder(policy.caseInsensitive)), cancelled);
  let error: UnitLog["error"] = null;
  try {
    for (;;) {
      const r = walk.step();
      if (r === true) break;
      // the worker's loop has no other request to let through; the pause only reads the word
      if (r === false) await clock.pause();
    }
  } catch (err) {
    if (err instanceof UnitCancelled) throw err;
    const code = err instanceof ServerfsError ? err.code : null;
    if (code === "SEARCH_FAILED") throw new UnitCancelled();
    if (code !== "RESOURCE_EXHAUSTED" && code !== "SEARCH_TIMEOUT") throw err;
    error = code;
  } finally {
    walk.close();
    clock.finished();
  }
  const enc = new LevelEncoder();
  return {
    walked: walk.walked,
    stopped: walk.truncated,
    matches: walk.matches,
    matchAt: walk.matchAt,
    ignoredAt: walk.ignoredAt,
    warnAt: walk.warnAt,
    warnTexts: ignore === null ? [] : [...ignore.keptWarnings()],
    rest: walk.rest.map((d) => dirToWire(d, enc)),
    error,
  };
}
