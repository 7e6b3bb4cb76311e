// The Bridge endpoint's bounds against a real Bridge process: the connection cap refuses with a
// code and leaves open connections alone; idle connections and lines that never end are closed by
// the server with a coded line; a request being answered (a long poll) is never idle; a peer that
// does not read its reply is cut off. Short timeouts are configured through the listener options.
// The Windows pipe listener is run here over a unix socket path to show it shares every bound.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import path from "node:path";
import { peerCredentials } from "../../platform/index.ts";
import { RawBridgeClient as BridgeClient } from "../../src/bridge/ipc/client.ts";
import { listenPosix } from "../../src/bridge/ipc/server.posix.ts";
import { listenWindowsPipe } from "../../src/bridge/ipc/server.windows.ts";
import { authenticate } from "../support/pipe-handshake.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup, startHarness } from "./helpers.ts";
import { Peer, errorCode, frame, spawnBridge, type BridgeProcess } from "./socket-peer.ts";

// `review` tasks take no writer lease, so a task still stopping from an earlier test is no obstacle.
const submit = (prompt: string) =>
  frame("submit", "task.submit", { runtime: "fake", workdir: "repo", path: "", profile: "review", prompt });

async function call(b: BridgeProcess, method: string, params: Record<string, unknown> = {}) {
  return new BridgeClient({ path: b.socket }, 20_000).call(method, params);
}

describe("connection cap", () => {
  let b: BridgeProcess;
  beforeAll(async () => {
    b = await spawnBridge({ maxConnections: 4, idleTimeoutMs: 120_000, partialLineTimeoutMs: 120_000 });
  });
  afterAll(async () => {
    await b.stop();
  });

  test("the connection over the cap gets CONNECTION_LIMIT_REACHED and is closed; the others keep working", async () => {
    const open = await Promise.all([1, 2, 3, 4].map(() => Peer.open(b.socket)));
    for (const [i, p] of open.entries()) {
      await p.send(frame(`in-${i}`));
      expect((await p.next()).request_id).toBe(`in-${i}`);
    }
    const over = await Peer.open(b.socket);
    await over.send(frame("over"));
    const refusal = await over.next();
    expect(refusal).toEqual({
      request_id: null,
      ok: false,
      error: { code: "CONNECTION_LIMIT_REACHED", message: "too many open connections (limit 4)" },
    });
    expect(await over.waitClosed()).toBe(true);
    // Its request was never dispatched: the refusal is the only line.
    expect(over.lines).toEqual([]);
    // The Bridge's own client surfaces the code.
    await expect(call(b, "bridge.status")).rejects.toMatchObject({ code: "CONNECTION_LIMIT_REACHED" });
    for (const [i, p] of open.entries()) {
      await p.send(frame(`again-${i}`));
      expect((await p.next()).request_id).toBe(`again-${i}`);
      expect(p.closed).toBe(false);
    }
    // The cap counts open connections: once one goes, a new one is admitted.
    open[0]!.end();
    let admitted: Record<string, unknown> | null = null;
    while (!admitted) {
      admitted = await call(b, "bridge.status").catch(() => null);
      if (!admitted) await Bun.sleep(50);
    }
    expect(admitted?.pid).toBe(b.pid);
    for (const p of open) p.end();
  }, 60_000);
});

describe("timeouts", () => {
  let b: BridgeProcess;
  beforeAll(async () => {
    b = await spawnBridge({ maxConnections: 64, idleTimeoutMs: 1500, partialLineTimeoutMs: 1500 });
  });
  afterAll(async () => {
    await b.stop();
  });

  test("an idle connection is closed by the server with CONNECTION_IDLE_TIMEOUT", async () => {
    const p = await Peer.open(b.socket);
    expect(await p.next(15_000)).toEqual({
      request_id: null,
      ok: false,
      error: { code: "CONNECTION_IDLE_TIMEOUT", message: "connection was idle too long" },
    });
    expect(await p.waitClosed()).toBe(true);
  }, 30_000);

  test("a line that never ends is closed with REQUEST_LINE_TIMEOUT, however slowly it keeps trickling", async () => {
    const p = await Peer.open(b.socket);
    await p.send(`{"protocol_version":1,"request_id":"slow","method":"bridge.status","params":{"pad":"`);
    // A byte every 200 ms keeps the connection busy, but the line's own clock keeps running.
    const trickle = setInterval(() => p.sock.write("x"), 200);
    const reply = await p.next(15_000);
    clearInterval(trickle);
    expect(reply).toEqual({
      request_id: null,
      ok: false,
      error: { code: "REQUEST_LINE_TIMEOUT", message: "request line was not completed in time" },
    });
    expect(await p.waitClosed()).toBe(true);
  }, 30_000);

  test("lines streamed in split chunks for longer than the timeouts are all answered", async () => {
    const p = await Peer.open(b.socket);
    const n = 40;
    let stream = "";
    for (let i = 0; i < n; i++) stream += frame(`s${i}`);
    // Every chunk ends mid-line, for about 4 s in all (well past both 1.5 s timeouts).
    const size = Math.ceil(stream.length / n);
    for (let off = 0; off < stream.length; off += size) {
      await p.send(stream.slice(off, off + size));
      await Bun.sleep(100);
    }
    for (let i = 0; i < n; i++) expect((await p.next()).request_id).toBe(`s${i}`);
    expect(p.closed).toBe(false);
    p.end();
  }, 30_000);

  test("a connection waiting on its own long poll is not idle; afterwards the idle clock starts again", async () => {
    const s = await Peer.open(b.socket);
    await s.send(submit("wait:"));
    const taskId = ((await s.next()).result as { task_id: string }).task_id;
    s.end();
    const p = await Peer.open(b.socket);
    // Twice the idle timeout, spent waiting on the Bridge.
    await p.send(frame("poll", "task.get", { task_id: taskId, wait_seconds: 3 }));
    const polled = await p.next(20_000);
    expect(polled.request_id).toBe("poll");
    expect(polled.ok).toBe(true);
    expect(p.closed).toBe(false);
    expect(errorCode(await p.next(15_000))).toBe("CONNECTION_IDLE_TIMEOUT");
    expect(await p.waitClosed()).toBe(true);
    expect((await call(b, "task.cancel", { task_id: taskId })).status).toBe("cancelled");
  }, 60_000);

  test("a peer that never reads its reply is cut off, even while it keeps sending", async () => {
    const s = await Peer.open(b.socket);
    await s.send(submit("big-events:10"));
    const submitted = await s.next();
    expect(submitted.ok).toBe(true);
    const taskId = (submitted.result as { task_id: string }).task_id;
    s.end();
    for (let i = 0; i < 200; i++) {
      if ((await call(b, "task.get", { task_id: taskId })).status === "succeeded") break;
      await Bun.sleep(100);
    }
    const p = await Peer.open(b.socket);
    p.sock.pause();
    // ~6 MB of replies owed, far more than the kernel buffers; blank lines keep arriving meanwhile.
    let frames = "";
    for (let i = 0; i < 10; i++) frames += frame(`big-${i}`, "task.events", { task_id: taskId, limit: 10 });
    p.sock.write(frames);
    const keepSending = setInterval(() => p.sock.write("\n"), 200);
    const closed = await p.waitClosed(20_000);
    clearInterval(keepSending);
    expect(closed).toBe(true);
    expect(b.logs().some((l) => l.event === "ipc.connection_dropped" && l.reason === "CONNECTION_IDLE_TIMEOUT")).toBe(true);
    expect((await call(b, "bridge.status")).pid).toBe(b.pid);
  }, 60_000);
});

describe("method and parameter names are own properties only", () => {
  let b: BridgeProcess;
  beforeAll(async () => {
    b = await spawnBridge({});
  });
  afterAll(async () => {
    await b.stop();
  });

  test("inherited names are not methods", async () => {
    const p = await Peer.open(b.socket);
    for (const method of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf"]) {
      await p.send(frame(`m-${method}`, method, {}));
      const reply = await p.next();
      expect([reply.request_id, reply.ok, errorCode(reply)]).toEqual([`m-${method}`, false, "METHOD_NOT_FOUND"]);
    }
    p.end();
  });

  test("inherited names and __proto__ are unknown parameters", async () => {
    const p = await Peer.open(b.socket);
    const task = `"task_id":"agt_000000000000000000000000"`;
    const cases: Array<[string, string, string]> = [
      ["runtime.list", `{"hasOwnProperty":1}`, "hasOwnProperty"],
      ["runtime.list", `{"__proto__":{}}`, "__proto__"],
      ["runtime.list", `{"constructor":1}`, "constructor"],
      ["runtime.list", `{"toString":"x"}`, "toString"],
      // A required key smuggled in through a JSON "__proto__" does not count as given.
      ["task.get", `{"__proto__":{${task}}}`, "__proto__"],
      ["task.get", `{${task},"__proto__":{"wait_seconds":1}}`, "__proto__"],
      ["task.get", `{${task},"hasOwnProperty":"task_id"}`, "hasOwnProperty"],
    ];
    for (const [i, [method, params, key]] of cases.entries()) {
      await p.send(`{"protocol_version":1,"request_id":"p${i}","method":"${method}","params":${params}}\n`);
      const reply = await p.next();
      expect([reply.request_id, errorCode(reply)]).toEqual([`p${i}`, "INVALID_REQUEST"]);
      expect((reply.error as { message: string }).message).toBe(`unknown parameter '${key}' for ${method}`);
    }
    // An envelope key named __proto__ is an extra key.
    await p.send(`{"protocol_version":1,"request_id":"env","method":"runtime.list","params":{},"__proto__":{"x":1}}\n`);
    const env = await p.next();
    expect([env.request_id, errorCode(env)]).toEqual(["env", "INVALID_REQUEST"]);
    // Nothing was widened: the real methods answer as before, an unknown task is still unknown.
    await p.send(frame("after", "task.get", { task_id: "agt_000000000000000000000000" }));
    expect(errorCode(await p.next())).toBe("AGENT_TASK_NOT_FOUND");
    p.end();
  });
});

describe("JSON __proto__ keys cannot pollute the Bridge", () => {
  test("an in-process Bridge fed __proto__ everywhere keeps Object.prototype clean", async () => {
    const h = await startHarness();
    try {
      // A real pending question, so nested answer objects reach their validation.
      const id = await h.submit("question:Which one?");
      const rid = (await h.waitFor(id, (v) => v.pending_request_id !== null)).pending_request_id as string;
      const p = await Peer.open(h.bridge.paths.socketPath);
      const poison = `{"polluted":"yes","task_id":"${id}","question_id":"q1","selected_option_ids":["a"]}`;
      const rpc = (rqid: string, method: string, params: string) =>
        `{"protocol_version":1,"request_id":"${rqid}","method":"${method}","params":${params}}`;
      const frames = [
        rpc("a", "runtime.list", `{"__proto__":${poison}}`),
        rpc("b", "task.get", `{"__proto__":${poison}}`),
        rpc("c", "task.question.answer", `{"task_id":"${id}","request_id":"${rid}","answers":[{"__proto__":${poison}}]}`),
        rpc("d", "task.question.answer", `{"task_id":"${id}","request_id":"${rid}","answers":[{"question_id":"q1","__proto__":${poison}}]}`),
        rpc("e", "task.approval.respond", `{"task_id":"${id}","request_id":"${rid}","decision":"deny","__proto__":${poison}}`),
        `{"__proto__":${poison},"protocol_version":1,"request_id":"f","method":"runtime.list","params":{}}`,
      ];
      const codes: string[] = [];
      for (const f of frames) {
        await p.send(`${f}\n`);
        codes.push(errorCode(await p.next()));
      }
      expect(codes).toEqual([
        "INVALID_REQUEST",
        "INVALID_REQUEST",
        "INVALID_QUESTION_ANSWER",
        "INVALID_QUESTION_ANSWER",
        "INVALID_REQUEST",
        "INVALID_REQUEST",
      ]);
      expect(Object.hasOwn(Object.prototype, "polluted")).toBe(false);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).question_id).toBeUndefined();
      // The question is still pending and answerable the honest way.
      const t = await h.call("task.get", { task_id: id });
      expect(t.pending_request_id).toBe(rid);
      await h.call("task.question.answer", { task_id: id, request_id: rid, answers: [{ question_id: "q1", selected_option_ids: ["a"] }] });
      expect((await h.waitTerminal(id)).status).toBe("succeeded");
      p.end();
    } finally {
      await h.stop();
      cleanup(h.root);
    }
  }, 60_000);
});

describe("the Windows pipe listener has the same bounds", () => {
  // listenWindowsPipe is node:net; given a filesystem path it serves a unix socket, so its
  // connection logic (handshake, cap, clocks, queue) runs here too. Only the named pipe itself
  // needs Windows.
  test("cap, idle before the handshake, unfinished line, non-reading peer; nothing kept afterwards", async () => {
    const dir = tempDir("sfs-pipe-");
    const pipePath = path.join(dir, "pipe.sock");
    const listener = await listenWindowsPipe({
      pipePath,
      token: "pipe-token",
      // task.get never answers here: a request in flight forever.
      dispatch: (method) => (method === "task.get" ? new Promise(() => {}) : Promise.resolve({ blob: "x".repeat(400_000) })),
      bounds: { maxConnections: 2, idleTimeoutMs: 1000, partialLineTimeoutMs: 1000 },
    });
    const opened = async () => {
      const peer = await Peer.open(pipePath);
      await authenticate(peer, "pipe-token");
      return peer;
    };
    try {
      const a = await opened();
      const b = await Peer.open(pipePath);
      await a.send(frame("a1"));
      expect((await a.next()).request_id).toBe("a1");
      const over = await Peer.open(pipePath);
      // Over the cap: the refusal, with no handshake offered.
      expect(errorCode(await over.next())).toBe("CONNECTION_LIMIT_REACHED");
      expect(await over.waitClosed()).toBe(true);
      // b never answered the server's hello: only the idle clock runs for it.
      expect((await b.next()).serverfs_handshake).toBe("server_hello");
      expect(errorCode(await b.next(15_000))).toBe("CONNECTION_IDLE_TIMEOUT");
      expect(await b.waitClosed()).toBe(true);
      a.end();

      const partial = await opened();
      await partial.send(`{"protocol_version":1,`);
      expect(errorCode(await partial.next(15_000))).toBe("REQUEST_LINE_TIMEOUT");
      expect(await partial.waitClosed()).toBe(true);

      const deaf = await opened();
      deaf.sock.pause();
      let frames = "";
      for (let i = 0; i < 50; i++) frames += frame(`d${i}`);
      deaf.sock.write(frames);
      const keepSending = setInterval(() => deaf.sock.write("\n"), 200);
      const closed = await deaf.waitClosed(20_000);
      clearInterval(keepSending);
      expect(closed).toBe(true);

      const done = await new BridgeClient({ path: pipePath, pipeToken: "pipe-token" }).call("bridge.status", {});
      expect((done.blob as string).length).toBe(400_000);
      for (let i = 0; i < 100 && listener.connectionCount() > 0; i++) await Bun.sleep(50);
      expect(listener.connectionCount()).toBe(0);
      // Closing the listener does not wait for a connection with a request in flight: it is cut.
      const holder = await opened();
      await holder.send(frame("hang", "task.get", { task_id: "agt_000000000000000000000000" }));
      await Bun.sleep(1500);
      expect(holder.closed).toBe(false);
      await listener.close();
      expect(await holder.waitClosed()).toBe(true);
    } finally {
      await listener.close();
      cleanup(dir);
    }
  }, 60_000);
});

test("a unix listener keeps no connection once its peers are gone, refused ones included", async () => {
  const dir = tempDir("sfs-live-");
  const listener = await listenPosix({
    socketPath: path.join(dir, "run", "b.sock"),
    dispatch: async () => ({}),
    peerCredentials,
    bounds: { maxConnections: 10 },
  });
  try {
    const peers = await Promise.all(Array.from({ length: 30 }, () => Peer.open(listener.endpoint)));
    for (let i = 0; i < 100 && peers.filter((p) => p.closed).length < 20; i++) await Bun.sleep(50);
    expect(peers.filter((p) => p.closed).length).toBe(20);
    expect(listener.connectionCount()).toBe(10);
    for (const p of peers) p.end();
    for (let i = 0; i < 100 && listener.connectionCount() > 0; i++) await Bun.sleep(50);
    expect(listener.connectionCount()).toBe(0);
    // And it admits connections again.
    expect(await new BridgeClient({ path: listener.endpoint }).call("runtime.list", {})).toEqual({});
  } finally {
    await listener.close();
    cleanup(dir);
  }
});
