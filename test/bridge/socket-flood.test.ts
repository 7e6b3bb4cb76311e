// A real Bridge process under a flood from its own uid: 1,000 idle connections plus 100 lines that
// never end, then a peer that pipelines requests and never reads. The Bridge keeps answering fresh
// connections throughout, holds every idle and endless connection open without answering the
// endless ones, and cuts the non-reading peer off at its queue cap (CONNECTION_QUEUE_FULL).
// How much memory all this costs is a measurement (resident memory depends on the collector and
// the machine), not an assertion here: bench/bridge/ measures the Bridge's RSS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BridgeClient } from "../../src/bridge/ipc/client.ts";
import { DEFAULT_SOCKET_BOUNDS } from "../../src/bridge/ipc/bounds.ts";
import { Peer, ensureOwnNofile, frame, spawnBridge, type BridgeProcess } from "./socket-peer.ts";

const MB = 1024 * 1024;
const IDLE = 1000;
const ENDLESS = 100;
/** Each endless line holds this much in the Bridge (under the 1 MiB line cap). */
const ENDLESS_BYTES = 512 * 1024;

let b: BridgeProcess;
beforeAll(async () => {
  // Both ends hold ~1,100 descriptors.
  ensureOwnNofile(4096);
  // The cap is raised for this scenario only; timeouts long enough not to fire while it runs.
  b = await spawnBridge({ maxConnections: 2000, idleTimeoutMs: 600_000, partialLineTimeoutMs: 600_000 }, 8192);
});
afterAll(async () => {
  await b.stop();
});

async function statusFromFreshConnection(): Promise<Record<string, unknown>> {
  return new BridgeClient({ path: b.socket }, 20_000).call("bridge.status", {});
}

async function openMany(n: number): Promise<Peer[]> {
  const out: Peer[] = [];
  for (let i = 0; i < n; i += 100) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => Peer.open(b.socket)))));
  }
  return out;
}

describe("flood from the Bridge's own uid", () => {
  test("1,000 idle connections and 100 endless lines: fresh connections are answered throughout and after", async () => {
    for (let i = 0; i < 20; i++) await statusFromFreshConnection();

    const idle = await openMany(IDLE);
    const endless = await openMany(ENDLESS);
    const head = `{"protocol_version":1,"request_id":"never","method":"bridge.status","params":{"pad":"`;
    const body = head + "x".repeat(ENDLESS_BYTES - head.length);
    // Resolves once the kernel took every byte, i.e. the Bridge has read them.
    await Promise.all(endless.map((p) => p.send(body)));

    for (let i = 0; i < 5; i++) expect((await statusFromFreshConnection()).pid).toBe(b.pid);
    // An idle connection that finally speaks is still served; an endless line got no answer.
    await idle[0]!.send(frame("late"));
    expect((await idle[0]!.next()).request_id).toBe("late");
    expect(idle.filter((p) => p.closed).length).toBe(0);
    expect(endless.filter((p) => p.closed || p.lines.length > 0).length).toBe(0);

    for (const p of [...idle, ...endless]) p.end();
    expect((await statusFromFreshConnection()).pid).toBe(b.pid);
  }, 120_000);

  test("a peer that pipelines requests and never reads is cut off at the queue cap; others are answered", async () => {
    const peer = await Peer.open(b.socket);
    peer.sock.pause();
    // Twenty times the cap in requests; their replies overflow the kernel buffer long before.
    const one = frame("flood");
    const total = 20 * DEFAULT_SOCKET_BOUNDS.maxQueuedBytes;
    const batch = one.repeat(Math.ceil(MB / one.length));
    let answered = 0;
    let flooding = true;
    const others = (async () => {
      while (flooding) {
        expect((await statusFromFreshConnection()).pid).toBe(b.pid);
        answered++;
      }
    })();
    try {
      for (let sent = 0; sent < total; sent += batch.length) peer.sock.write(batch);
      expect(await peer.waitClosed(60_000)).toBe(true);
    } finally {
      flooding = false;
      await others;
    }
    expect(answered).toBeGreaterThan(0);
    expect(b.logs().some((l) => l.event === "ipc.connection_dropped" && l.reason === "CONNECTION_QUEUE_FULL")).toBe(true);
    expect((await statusFromFreshConnection()).pid).toBe(b.pid);
  }, 120_000);
});

