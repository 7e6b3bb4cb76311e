// The Bridge's heap-collection policy after finished runs (src/common/heap-collector.ts): a full
// collection every RELEASES_PER_COLLECTION releases, after the releasing turn; a collection once
// nothing runs, and (the Bridge's) a shrink only once nothing has run for longer; nothing after close.
// A second collector armed later serves as the clock: timers of one delay fire in the order they were set.
import { describe, expect, test } from "bun:test";
import { HeapCollector, RELEASES_PER_COLLECTION, type Collection } from "../../src/common/heap-collector.ts";
import { waitUntil } from "../support/proc.ts";

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

describe("HeapCollector", () => {
  test("busy: one collection per RELEASES_PER_COLLECTION releases, after the releasing turn, never an idle one", async () => {
    const seen: Collection[] = [];
    const heap = new HeapCollector(() => 3, (k) => seen.push(k));
    for (let i = 1; i < RELEASES_PER_COLLECTION; i++) heap.done();
    await nextTurn();
    expect(seen).toEqual([]);
    heap.done();
    expect(seen).toEqual([]);
    await nextTurn();
    expect(seen).toEqual(["busy"]);
    for (let i = 0; i < 2 * RELEASES_PER_COLLECTION; i++) heap.done();
    await nextTurn();
    expect(seen).toEqual(["busy", "busy"]);
    heap.close();
  });

  test("idle: once the last run released, one idle collection; a failing one is swallowed", async () => {
    const seen: Collection[] = [];
    let active = 1;
    const heap = new HeapCollector(() => active, (k) => {
      seen.push(k);
      throw new Error("collector trouble");
    });
    heap.done();
    active = 0;
    heap.done();
    expect(await waitUntil(() => seen.length > 0, 5000)).toBe(true);
    expect(seen).toEqual(["idle"]);
    // A run that started meanwhile cancels the idle collection; its own release arms a new one.
    active = 1;
    heap.done();
    active = 0;
    heap.done();
    active = 1;
    await Bun.sleep(1500);
    expect(seen).toEqual(["idle"]);
    heap.close();
  });

  test("shrink: after the idle collection, once nothing has run for shrinkAfterMs; never when a run started meanwhile", async () => {
    const seen: Collection[] = [];
    let active = 0;
    const timing = { idleMs: 5, shrinkAfterMs: 60 };
    const heap = new HeapCollector(() => active, (k) => seen.push(k), RELEASES_PER_COLLECTION, timing);
    heap.done();
    // A run starts before either wait is over: neither the collection nor the shrink happens.
    active = 1;
    const clock: Collection[] = [];
    const later = new HeapCollector(() => 0, (k) => clock.push(k), RELEASES_PER_COLLECTION, timing);
    later.done();
    expect(await waitUntil(() => clock.includes("shrink"), 5000)).toBe(true);
    expect(seen).toEqual([]);
    // Its release starts both waits again.
    active = 0;
    heap.done();
    expect(await waitUntil(() => seen.includes("shrink"), 5000)).toBe(true);
    expect(seen).toEqual(["idle", "shrink"]);
    heap.close();
    later.close();
  });

  test("without shrinkAfterMs (serve's collectors) there is never a shrink", async () => {
    const seen: Collection[] = [];
    const heap = new HeapCollector(() => 0, (k) => seen.push(k), RELEASES_PER_COLLECTION, { idleMs: 5 });
    heap.done();
    const clock: Collection[] = [];
    const later = new HeapCollector(() => 0, (k) => clock.push(k), RELEASES_PER_COLLECTION, { idleMs: 5, shrinkAfterMs: 60 });
    later.done();
    expect(await waitUntil(() => clock.includes("shrink"), 5000)).toBe(true);
    expect(seen).toEqual(["idle"]);
    heap.close();
    later.close();
  });

  test("units: a walk's entries count toward a custom busy threshold (serve's walks)", async () => {
    const seen: Collection[] = [];
    const heap = new HeapCollector(() => 1, (k) => seen.push(k), 400_000);
    heap.done(150_000);
    heap.done(200_000);
    await nextTurn();
    expect(seen).toEqual([]);
    heap.done(60_000);
    await nextTurn();
    expect(seen).toEqual(["busy"]);
    // the count restarts from zero after a collection
    heap.done(399_999);
    await nextTurn();
    expect(seen).toEqual(["busy"]);
    heap.close();
  });

  test("after close nothing is collected, not even a pending idle collection", async () => {
    const seen: Collection[] = [];
    const heap = new HeapCollector(() => 0, (k) => seen.push(k));
    heap.done();
    heap.close();
    for (let i = 0; i < RELEASES_PER_COLLECTION; i++) heap.done();
    await Bun.sleep(1500);
    expect(seen).toEqual([]);
  });
});
