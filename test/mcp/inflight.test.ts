// Shutdown draining with real timers: requests that finish inside the grace period are left
// alone, long ones see the shutdown signal, and one that ignores it cannot hold shutdown hostage.
import { expect, test } from "bun:test";
import { InFlight } from "../../src/mcp/inflight.ts";

test("a request finishing within the grace period is not aborted", async () => {
  const inflight = new InFlight();
  let finished = false;
  inflight.track(Bun.sleep(50).then(() => (finished = true)));
  const started = performance.now();
  await inflight.drain(400, 200);
  expect(finished).toBe(true);
  expect(inflight.shutdownSignal.aborted).toBe(false);
  expect(performance.now() - started).toBeLessThan(300);
  expect(inflight.size).toBe(0);
});

test("a long request is aborted after the grace period and its settling is awaited", async () => {
  const inflight = new InFlight();
  let outcome = "running";
  inflight.track(
    new Promise<void>((resolve) => {
      inflight.shutdownSignal.addEventListener("abort", () => {
        outcome = "aborted";
        setTimeout(resolve, 20);
      });
    }),
  );
  const started = performance.now();
  await inflight.drain(100, 500);
  const elapsed = performance.now() - started;
  expect(outcome).toBe("aborted");
  expect(inflight.size).toBe(0);
  expect(elapsed).toBeGreaterThanOrEqual(95);
  expect(elapsed).toBeLessThan(400);
});

test("a request that ignores the abort cannot delay shutdown past grace + abort time", async () => {
  const inflight = new InFlight();
  inflight.track(new Promise<void>(() => {}));
  const started = performance.now();
  await inflight.drain(100, 100);
  const elapsed = performance.now() - started;
  expect(inflight.shutdownSignal.aborted).toBe(true);
  expect(inflight.size).toBe(1);
  expect(elapsed).toBeGreaterThanOrEqual(190);
  expect(elapsed).toBeLessThan(600);
});

test("a request arriving while draining is waited for too", async () => {
  const inflight = new InFlight();
  let second = false;
  inflight.track(
    Bun.sleep(30).then(() => {
      inflight.track(Bun.sleep(30).then(() => (second = true)));
    }),
  );
  await inflight.drain(400, 100);
  expect(second).toBe(true);
  expect(inflight.shutdownSignal.aborted).toBe(false);
});
