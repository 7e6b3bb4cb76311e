// find_files: the walk (./find-walk.ts) from a validated directory, on this thread and, where
// searches have a worker, on that one too (./find-units.ts), with one answer either way. The walk
// runs under search_timeout_seconds (SEARCH_TIMEOUT) and gives the event loop back every 25 ms,
// so a big tree never holds up other requests.

import type { Target, Workspace } from "../context.ts";
import { fail } from "../fail.ts";
import { compileFnmatch, MAX_GLOB_CHARS, type GlobMatcher } from "../glob.ts";
import type { WalkIgnore } from "../ignore/index.ts";
import { WalkClock } from "../walk.ts";
import { compileExclude, walkIgnoreFor, type WalkFilterArgs } from "../walk-filter.ts";
import { FindWalkLoop, type FindDir } from "./find-walk.ts";
import { FindUnits, isUnit, replay, type Unit } from "./find-units.ts";

export interface FindOutput {
  matches: { path: string }[];
  returned: number;
  truncated: boolean;
  /** Entries ignore files left out (0 with include_ignored or respect_ignore_files = false). */
  ignored: number;
  /** Ignore files that were cut, held too many patterns or could not be read. */
  ignore_warnings?: string[];
}

export async function findFiles(ws: Workspace, t: Target, pattern: string, limit: number, signal?: AbortSignal, filter: WalkFilterArgs = {}): Promise<FindOutput> {
  if (pattern.length > MAX_GLOB_CHARS) throw fail("INVALID_ARGUMENT", t.alias, t.rel, `pattern must be at most ${MAX_GLOB_CHARS} characters`);
  const exclude = compileExclude(t, filter.exclude);
  const clock = new WalkClock(t, ws.registry.limits.search_timeout_seconds, signal, "find", 16);
  const ignore = walkIgnoreFor(ws, t, filter);
  const root: FindDir = { parts: t.parts, rel: t.rel, sub: "", level: ignore === null ? null : ignore.start(t.parts).level };
  const units = FindUnits.begin(ws, t, clock, { pattern, exclude: filter.exclude ?? null, limit, ignore });
  const walk = new CallWalk(ws, t, compileFnmatch(pattern), limit, clock, ignore, exclude, root, units);
  try {
    for (;;) {
      const r = walk.step();
      if (r === true) break;
      if (r === false) await clock.pause();
      else {
        await r;
        clock.resumed();
      }
    }
  } finally {
    walk.close();
    await units?.end();
    clock.finished();
  }
  const out: FindOutput = { matches: walk.matches, returned: walk.matches.length, truncated: walk.truncated, ignored: ignore?.ignored ?? 0 };
  const warnings = ignore?.warnings() ?? [];
  if (warnings.length > 0) out.ignore_warnings = warnings;
  return out;
}

/** The call's own walk: its answer, its stack, and the worker's units in their places on it. */
class CallWalk extends FindWalkLoop<Unit> {
  readonly matches: { path: string }[] = [];

  constructor(
    ws: Workspace,
    private readonly t: Target,
    matcher: GlobMatcher,
    private readonly limit: number,
    clock: WalkClock,
    ignore: WalkIgnore | null,
    exclude: ((sub: string, name: string) => boolean) | null,
    root: FindDir,
    private readonly units: FindUnits | null,
  ) {
    super({ native: ws.native, rootFd: ws.rootFd(t), policy: t.wd.policy, maxWalk: ws.registry.limits.max_walk_entries, alias: t.alias, rel: t.rel }, matcher, clock, ignore, exclude, root, true);
  }

  protected nextDir(): FindDir | null | Promise<void> {
    const units = this.units;
    if (units === null) return (this.stack.pop() as FindDir | undefined) ?? null;
    const lockstep = units.offer(this.stack);
    if (lockstep !== null) return lockstep;
    for (;;) {
      const top = this.stack.pop();
      if (top === undefined) return null;
      if (!isUnit(top)) return top;
      if (top.state === "pending") {
        this.stack.push(top);
        return units.wait(top);
      }
      if (top.state === "dropped") return top.dir;
      const log = top.log as NonNullable<typeof top.log>;
      const r = replay(log, this.walked, this.matches.length, this.scope.maxWalk, this.limit, this.ignore, this.t);
      for (const path of r.matches) this.matches.push({ path });
      this.walked += r.walked;
      if (this.ignore !== null) this.ignore.ignored += r.ignored;
      if (r.stops) {
        this.stop();
        return null;
      }
      if (!top.expanded) this.pushInWalkOrder(units.rest(log));
    }
  }

  protected take(path: string): boolean {
    if (this.matches.length === this.limit) return false;
    this.matches.push({ path });
    return true;
  }
}
