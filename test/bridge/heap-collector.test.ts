// The Bridge's heap-collection policy after finished runs (src/bridge/service/heap.ts): every
// RELEASES_PER_COLLECTION releases, after the releasing turn; once idle; never after close.
import { describe, expect, test } from "bun:test";
import { HeapCollector, RELEASES_PER_COLLECTION } from "../../src/bridge/service/heap.ts";
import { waitUntil } from "../support/proc.ts";

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 5));

describe("HeapCollector", () => {
  test("busy: one collection per RELEASES_PER_COLLECTION releases, run after the releasing turn", async () => {
    let collections = 0;
    const heap = new HeapCollector(() => 3, () => collections++);
    for (let i = 1; i < RELEASES_PER_COLLECTION; i++) heap.runReleased();
    await nextTurn();
    expect(collections).toBe(0);
    heap.runReleased();
    expect(collections).toBe(0);
    await nextTurn();
    expect(collections).toBe(1);
    for (let i = 0; i < 2 * RELEASES_PER_COLLECTION; i++) heap.runReleased();
    await nextTurn();
    expect(collections).toBe(2);
    heap.close();
  });

  test("idle: the last run's release leads to a collection; a failing collection is swallowed", async () => {
    let collections = 0;
    const heap = new HeapCollector(() => 0, () => {
      collections++;
      throw new Error("collector trouble");
    });
    heap.runReleased();
    expect(await waitUntil(() => collections === 1, 5000)).toBe(true);
    heap.close();
  });

  test("after close nothing is collected, not even a pending idle collection", async () => {
    let collections = 0;
    const heap = new HeapCollector(() => 0, () => collections++);
    heap.runReleased();
    heap.close();
    for (let i = 0; i < RELEASES_PER_COLLECTION; i++) heap.runReleased();
    await Bun.sleep(1500);
    expect(collections).toBe(0);
  });
});
