// HumanWaits brokers a provider's requests one after another. Withdrawing the request being
// brokered stales the task's pending interaction; withdrawing one still queued behind it only
// aborts that one's signal, and the pending interaction of the other request stays pending.
import { expect, test } from "bun:test";
import { HumanWaits } from "../../../src/runtimes/kernel/turn-support.ts";

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test("withdrawing a queued request leaves the pending one alone; withdrawing the pending one abandons it", async () => {
  const waits = new HumanWaits();
  let abandoned = 0;
  const ctx = { abandonInteraction: () => void abandoned++ };
  const first = deferred<string>();
  const firstStarted = deferred<void>();
  const seen: { key: string; abortedAtStart: boolean }[] = [];
  const a = waits.enqueue("a", async (withdrawn) => {
    seen.push({ key: "a", abortedAtStart: withdrawn.aborted });
    firstStarted.resolve();
    return Promise.race([first.promise, new Promise<string>((_, reject) => withdrawn.addEventListener("abort", () => reject(new Error("a withdrawn"))))]);
  });
  const b = waits.enqueue("b", async (withdrawn) => {
    seen.push({ key: "b", abortedAtStart: withdrawn.aborted });
    return withdrawn.aborted ? "b refused unasked" : "b asked";
  });
  await firstStarted.promise;
  waits.withdraw("b", ctx);
  expect(abandoned).toBe(0);
  first.resolve("a answered");
  expect(await a).toBe("a answered");
  expect(await b).toBe("b refused unasked");
  expect(seen).toEqual([
    { key: "a", abortedAtStart: false },
    { key: "b", abortedAtStart: true },
  ]);

  const cStarted = deferred<void>();
  const c = waits.enqueue("c", async (withdrawn) => {
    cStarted.resolve();
    return new Promise<string>((_, reject) => withdrawn.addEventListener("abort", () => reject(new Error("c withdrawn"))));
  });
  await cStarted.promise;
  waits.withdraw("c", ctx);
  expect(abandoned).toBe(1);
  expect(c).rejects.toThrow("c withdrawn");
  await c.catch(() => {});
  expect(waits.size).toBe(0);
  // an unknown or already-finished key changes nothing
  waits.withdraw("a", ctx);
  expect(abandoned).toBe(1);
});
