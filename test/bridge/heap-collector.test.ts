// The Bridge's heap-collection policy after finished runs (src/bridge/service/heap.ts): a full
// collection every RELEASES_PER_COLLECTION releases, after the releasing turn; a collection and
// shrink once nothing runs; nothing after close.
import { describe, expect, test } from "bun:test";
import { HeapCollector, RELEASES_PER_COLLECTION, type Collection } from "../../src/bridge/service/heap.ts";
import { waitUntil } from "../support/proc.ts";

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

describe("HeapCollector", () => {
  test("busy: one collection per RELEASES_PER_COLLECTION releases, after the releasing turn, never an idle one", async () => {
    const seen: Collection[] = [];
    const heap = new HeapCollector(() => 3, (k) => seen.push(k));
    for (let i = 1; i < RELEASES_PER_COLLECTION; i++) heap.runReleased();
    await nextTurn();
    expect(seen).toEqual([]);
    heap.runReleased();
    expect(seen).toEqual([]);
    await nextTurn();
    expect(seen).toEqual(["busy"]);
    for (let i = 0; i < 2 * RELEASES_PER_COLLECTION; i++) heap.runReleased();
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
    heap.runReleased();
    active = 0;
    heap.runReleased();
    expect(await waitUntil(() => seen.length > 0, 5000)).toBe(true);
    expect(seen).toEqual(["idle"]);
    // A run that started meanwhile cancels the idle collection; its own release arms a new one.
    active = 1;
    heap.runReleased();
    active = 0;
    heap.runReleased();
    active = 1;
    await Bun.sleep(1500);
    expect(seen).toEqual(["idle"]);
    heap.close();
  });

  test("after close nothing is collected, not even a pending idle collection", async () => {
    const seen: Collection[] = [];
    const heap = new HeapCollector(() => 0, (k) => seen.push(k));
    heap.runReleased();
    heap.close();
    for (let i = 0; i < RELEASES_PER_COLLECTION; i++) heap.runReleased();
    await Bun.sleep(1500);
    expect(seen).toEqual([]);
  });
});
