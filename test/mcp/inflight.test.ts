// Shutdown draining: requests that finish inside the grace period are left alone, long ones see
// the shutdown signal, and one that ignores it cannot hold shutdown hostage. Every proof is an
// order of events (a request settled by the test, the abort seen by the request), never a measured
// duration: a grace long enough never to run out is "inside the grace", and a grace of 0 is
// "past it".
import { expect, test } from "bun:test";
import { InFlight } from "../../src/mcp/inflight.ts";

const NEVER_RUNS_OUT = 600_000;
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

test("a request finishing within the grace period is not aborted, and drain waits for it", async () => {
  const inflight = new InFlight();
  let finish!: () => void;
  inflight.track(new Promise<void>((r) => (finish = r)));
  let drained = false;
  const draining = inflight.drain(NEVER_RUNS_OUT, NEVER_RUNS_OUT).then(() => (drained = true));
  await turns(5);
  expect(drained).toBe(false); // still waiting for the request
  finish();
  await draining;
  expect(inflight.shutdownSignal.aborted).toBe(false);
  expect(inflight.size).toBe(0);
});

test("a long request is aborted after the grace period and its settling is awaited", async () => {
  const inflight = new InFlight();
  let outcome = "running";
  inflight.track(
    new Promise<void>((resolve) => {
      inflight.shutdownSignal.addEventListener("abort", () => {
        outcome = "aborted";
        // it settles a few turns after the abort: drain must still be waiting then
        void turns(3).then(() => {
          outcome = "settled";
          resolve();
        });
      });
    }),
  );
  await inflight.drain(0, NEVER_RUNS_OUT);
  expect(outcome).toBe("settled");
  expect(inflight.shutdownSignal.aborted).toBe(true);
  expect(inflight.size).toBe(0);
});

test("a request that ignores the abort cannot delay shutdown past grace + abort time", async () => {
  const inflight = new InFlight();
  inflight.track(new Promise<void>(() => {}));
  // both windows are short and real; drain returning at all is the proof (a hang fails the test)
  await inflight.drain(50, 50);
  expect(inflight.shutdownSignal.aborted).toBe(true);
  expect(inflight.size).toBe(1);
});

test("a request arriving while draining is waited for too", async () => {
  const inflight = new InFlight();
  let second = false;
  let finishSecond!: () => void;
  let finishFirst!: () => void;
  inflight.track(
    new Promise<void>((r) => (finishFirst = r)).then(() => {
      inflight.track(new Promise<void>((r) => (finishSecond = r)).then(() => (second = true)));
    }),
  );
  let drained = false;
  const draining = inflight.drain(NEVER_RUNS_OUT, NEVER_RUNS_OUT).then(() => (drained = true));
  finishFirst();
  await turns(5);
  expect(drained).toBe(false); // the second request arrived while draining
  finishSecond();
  await draining;
  expect(second).toBe(true);
  expect(inflight.shutdownSignal.aborted).toBe(false);
});
