// The RPC transport against a real Bridge on a real unix socket: exact codes for every malformed
// frame, what the connection does afterwards, the peer uid check with a real second uid, socket
// path safety, and the client's strict reply validation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { RawBridgeClient as BridgeClient } from "../../src/bridge/ipc/client.ts";
import { MAX_LINE_BYTES } from "../../src/bridge/ipc/protocol.ts";
import { clearStaleSocket, listenPosix, prepareSocketDirectory } from "../../src/bridge/ipc/server.posix.ts";
import { peerCredentials } from "../../platform/index.ts";
import { tempDir } from "../support/temp.ts";
import { errorCode, frame, LineSocket } from "../support/line-socket.ts";
import { cleanup, closeHarness, startHarness, type Harness } from "./helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => closeHarness(h));

/** A raw connection that collects reply lines and notices close. */
const Raw = { open: (p: string) => LineSocket.open(p, { replyMs: 5000, closeMs: 5000 }) };

const good = (id: string, method = "runtime.list", params: unknown = {}) => frame(id, method, params);
const code = errorCode;

describe("framing and envelope", () => {
  test("malformed envelopes get exact codes and the connection stays usable", async () => {
    const c = await Raw.open(h.bridge.paths.socketPath);
    const cases: Array<[string, string, string | null]> = [
      ["not-json\n", "INVALID_REQUEST", null],
      [`{"protocol_version":1,"request_id":"a","method":"runtime.list","params":{},"extra":1}\n`, "INVALID_REQUEST", "a"],
      [`{"protocol_version":1,"request_id":"b","method":"runtime.list"}\n`, "INVALID_REQUEST", "b"],
      [`{"protocol_version":true,"request_id":"c","method":"runtime.list","params":{}}\n`, "INVALID_REQUEST", "c"],
      [`{"protocol_version":1.5,"request_id":"c2","method":"runtime.list","params":{}}\n`, "INVALID_REQUEST", "c2"],
      [`{"protocol_version":2,"request_id":"d","method":"runtime.list","params":{}}\n`, "PROTOCOL_VERSION_UNSUPPORTED", "d"],
      [`{"protocol_version":1,"request_id":"","method":"runtime.list","params":{}}\n`, "INVALID_REQUEST", null],
      [`{"protocol_version":1,"request_id":"e","method":"runtime.list","params":[]}\n`, "INVALID_REQUEST", "e"],
      [`{"protocol_version":1,"request_id":"f","method":"shell.exec","params":{}}\n`, "METHOD_NOT_FOUND", "f"],
      [`{"protocol_version":1,"request_id":"g","method":"task.get","params":{"task_id":"x","limit":NaN}}\n`, "INVALID_REQUEST", null],
      [`{"protocol_version":1,"request_id":"h","method":"task.events","params":{"task_id":"x","limit":Infinity}}\n`, "INVALID_REQUEST", null],
      [`{"protocol_version":1,"request_id":"i","method":"task.events","params":{"task_id":"x","limit":true}}\n`, "INVALID_REQUEST", "i"],
      [`{"protocol_version":1,"request_id":"j","method":"task.get","params":{"task_id":"x","bogus":1}}\n`, "INVALID_REQUEST", "j"],
      [`[1,2,3]\n`, "INVALID_REQUEST", null],
    ];
    for (const [frame, expected, rid] of cases) {
      c.send(frame);
      const reply = await c.next();
      expect(reply.ok).toBe(false);
      expect(code(reply)).toBe(expected);
      expect(reply.request_id).toBe(rid);
      expect(Object.keys(reply).sort()).toEqual(["error", "ok", "request_id"]);
    }
    // Invalid UTF-8 bytes.
    c.send(new Uint8Array([0xff, 0xfe, 0x7b, 0x0a]));
    const bad = await c.next();
    expect(code(bad)).toBe("INVALID_REQUEST");
    expect(bad.request_id).toBeNull();
    // Still usable, and requests are answered in order.
    c.send(good("ok-1") + good("ok-2"));
    const r1 = await c.next();
    const r2 = await c.next();
    expect([r1.request_id, r1.ok, r2.request_id, r2.ok]).toEqual(["ok-1", true, "ok-2", true]);
    expect(c.closed).toBe(false);
    c.end();
  });

  test("a line of MAX+1 bytes gets REQUEST_TOO_LARGE and the connection is closed", async () => {
    const c = await Raw.open(h.bridge.paths.socketPath);
    c.send(good("before"));
    expect((await c.next()).ok).toBe(true);
    const prefix = `{"protocol_version":1,"request_id":"big","method":"runtime.list","params":{"pad":"`;
    const body = prefix + "x".repeat(MAX_LINE_BYTES + 1 - prefix.length - 3) + `"}}`;
    expect(Buffer.byteLength(body)).toBe(MAX_LINE_BYTES + 1);
    c.send(`${body}\n`);
    const reply = await c.next();
    expect(code(reply)).toBe("REQUEST_TOO_LARGE");
    expect(reply.request_id).toBeNull();
    expect(await c.waitClosed()).toBe(true);
  });

  test("a line of exactly MAX bytes is accepted (and fails only on its params)", async () => {
    const c = await Raw.open(h.bridge.paths.socketPath);
    const prefix = `{"protocol_version":1,"request_id":"max","method":"runtime.list","params":{"pad":"`;
    const body = prefix + "x".repeat(MAX_LINE_BYTES - prefix.length - 3) + `"}}`;
    expect(Buffer.byteLength(body)).toBe(MAX_LINE_BYTES);
    c.send(`${body}\n`);
    const reply = await c.next();
    expect(reply.request_id).toBe("max");
    expect(code(reply)).toBe("INVALID_REQUEST");
    c.end();
  });

  test("an oversized response is replaced by RESPONSE_TOO_LARGE for the same request id", async () => {
    const taskId = await h.submit("big-events:20");
    await h.waitTerminal(taskId);
    const c = await Raw.open(h.bridge.paths.socketPath);
    c.send(good("huge", "task.events", { task_id: taskId, limit: 500 }));
    const reply = await c.next();
    expect(reply.request_id).toBe("huge");
    expect(code(reply)).toBe("RESPONSE_TOO_LARGE");
    // A smaller page of the same events still works on the same connection (write queue flushed).
    c.send(good("page", "task.events", { task_id: taskId, limit: 10 }));
    const page = await c.next();
    expect(page.ok).toBe(true);
    expect(((page.result as { events: unknown[] }).events).length).toBe(10);
    c.end();
  });
});

describe("write queue", () => {
  test("60 pipelined ~600 KB replies to a reader that starts late all arrive intact and in order", async () => {
    const taskId = await h.submit("big-events:10");
    await h.waitTerminal(taskId);
    const c = await Raw.open(h.bridge.paths.socketPath);
    c.sock.pause();
    let frames = "";
    for (let i = 0; i < 60; i++) frames += good(`q${i}`, "task.events", { task_id: taskId, limit: 10 });
    c.send(frames);
    await Bun.sleep(300);
    c.sock.resume();
    for (let i = 0; i < 60; i++) {
      const r = await c.next(20_000);
      expect(r.request_id).toBe(`q${i}`);
      const events = (r.result as { events: Array<{ payload: { text?: string } }> }).events;
      expect(events.length).toBe(10);
    }
    c.end();
  }, 30_000);
});

describe("peer identity", () => {
  test("a peer with another uid is refused with PEER_NOT_AUTHORIZED before any dispatch", async () => {
    if (process.getuid!() !== 0 || !fs.existsSync("/usr/bin/setpriv")) {
      console.warn("skip: needs root and setpriv to connect as a real second uid");
      return;
    }
    const dir = tempDir("sfs-peer-");
    fs.chmodSync(dir, 0o755);
    const sock = path.join(dir, "run", "b.sock");
    let dispatched = 0;
    const listener = await listenPosix({
      socketPath: sock,
      dispatch: async () => {
        dispatched++;
        return {};
      },
      peerCredentials,
    });
    // Open the 0700 dir and the 0600 socket on purpose, so only the uid check stands in the way.
    fs.chmodSync(path.dirname(sock), 0o755);
    fs.chmodSync(sock, 0o666);
    const script = path.join(dir, "peer.ts");
    fs.writeFileSync(
      script,
      `const net=require("node:net");const s=net.connect({path:${JSON.stringify(sock)}});let b="";` +
        `s.on("connect",()=>s.write(${JSON.stringify(good("p1"))}));s.on("data",d=>{b+=d});s.on("close",()=>{process.stdout.write(b);process.exit(0)});` +
        `s.on("error",e=>{process.stdout.write("ERR "+e.code);process.exit(0)});`,
    );
    fs.chmodSync(script, 0o644);
    const proc = Bun.spawn(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, script], {
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp" },
    });
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    expect(out).not.toStartWith("ERR");
    const reply = JSON.parse(out.trim().split("\n")[0]!) as Record<string, unknown>;
    expect(reply).toEqual({ request_id: null, ok: false, error: { code: "PEER_NOT_AUTHORIZED", message: "peer is not authorized" } });
    expect(dispatched).toBe(0);
    // Our own uid is accepted on the same listener.
    const own = await new BridgeClient({ path: sock }).call("runtime.list", {});
    expect(own).toEqual({});
    expect(dispatched).toBe(1);
    await listener.close();
    cleanup(dir);
  });

  test("socket is 0600 inside a 0700 directory", () => {
    const st = fs.statSync(h.bridge.paths.socketPath);
    expect(st.mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(h.bridge.paths.socketPath)).mode & 0o777).toBe(0o700);
  });
});

describe("socket path safety", () => {
  test("a regular file at the socket path is SOCKET_PATH_IN_USE and left untouched", async () => {
    const dir = tempDir();
    const p = path.join(dir, "bridge.sock");
    fs.writeFileSync(p, "precious");
    await expect(clearStaleSocket(p)).rejects.toMatchObject({ code: "SOCKET_PATH_IN_USE" });
    expect(fs.readFileSync(p, "utf8")).toBe("precious");
    cleanup(dir);
  });

  test("a live socket is not stolen", async () => {
    await expect(
      listenPosix({ socketPath: h.bridge.paths.socketPath, dispatch: async () => ({}), peerCredentials }),
    ).rejects.toMatchObject({ code: "SOCKET_PATH_IN_USE" });
    expect((await h.call("runtime.list")).runtimes).toBeDefined();
  });

  test("a stale same-owner socket (its server was SIGKILLed) is recovered", async () => {
    const dir = tempDir();
    const p = path.join(dir, "run", "bridge.sock");
    fs.mkdirSync(path.dirname(p), { mode: 0o700 });
    const child = Bun.spawn(
      [process.execPath, "-e", `Bun.listen({unix:${JSON.stringify(p)},socket:{data(){}}});console.log("up");setInterval(()=>{},1000)`],
      { stdout: "pipe" },
    );
    const reader = child.stdout.getReader();
    await reader.read();
    child.kill("SIGKILL");
    await child.exited;
    expect(fs.lstatSync(p).isSocket()).toBe(true);
    const listener = await listenPosix({ socketPath: p, dispatch: async () => ({ pong: true }), peerCredentials });
    expect(await new BridgeClient({ path: p }).call("runtime.list", {})).toEqual({ pong: true });
    await listener.close();
    cleanup(dir);
  });

  test("group/world-writable or symlinked socket directories are refused", () => {
    const dir = tempDir();
    const open = path.join(dir, "open");
    fs.mkdirSync(open);
    fs.chmodSync(open, 0o777);
    expect(() => prepareSocketDirectory(open)).toThrow(expect.objectContaining({ code: "SOCKET_DIRECTORY_UNSAFE" }));
    const group = path.join(dir, "group");
    fs.mkdirSync(group);
    fs.chmodSync(group, 0o770);
    expect(() => prepareSocketDirectory(group)).toThrow(expect.objectContaining({ code: "SOCKET_DIRECTORY_UNSAFE" }));
    const real = path.join(dir, "real");
    fs.mkdirSync(real, { mode: 0o700 });
    const link = path.join(dir, "link");
    fs.symlinkSync(real, link);
    expect(() => prepareSocketDirectory(link)).toThrow(expect.objectContaining({ code: "SOCKET_DIRECTORY_UNSAFE" }));
    cleanup(dir);
  });
});

describe("client reply validation", () => {
  async function fakeServer(reply: (reqId: string) => string | null): Promise<{ path: string; close: () => void; dir: string }> {
    const dir = tempDir();
    const p = path.join(dir, "s.sock");
    const server = Bun.listen<{ buf: string }>({
      unix: p,
      socket: {
        open(s) {
          s.data = { buf: "" };
        },
        data(s, d) {
          s.data.buf += new TextDecoder().decode(d);
          const nl = s.data.buf.indexOf("\n");
          if (nl === -1) return;
          const id = (JSON.parse(s.data.buf.slice(0, nl)) as { request_id: string }).request_id;
          const out = reply(id);
          if (out !== null) s.write(out);
        },
      },
    });
    return { path: p, dir, close: () => server.stop(true) };
  }

  const cases: Array<[string, (id: string) => string]> = [
    ["request_id mismatch", () => `{"request_id":"other","ok":true,"result":{}}\n`],
    ["extra keys", (id) => `{"request_id":"${id}","ok":true,"result":{},"x":1}\n`],
    ["non-bool ok", (id) => `{"request_id":"${id}","ok":"yes","result":{}}\n`],
    ["result not an object", (id) => `{"request_id":"${id}","ok":true,"result":[1]}\n`],
    ["error with extra keys", (id) => `{"request_id":"${id}","ok":false,"error":{"code":"X","message":"m","y":1}}\n`],
    ["not json", () => `garbage\n`],
  ];
  for (const [name, make] of cases) {
    test(`${name} → AGENT_BRIDGE_PROTOCOL_ERROR`, async () => {
      const s = await fakeServer(make);
      await expect(new BridgeClient({ path: s.path }).call("runtime.list", {})).rejects.toMatchObject({
        code: "AGENT_BRIDGE_PROTOCOL_ERROR",
      });
      s.close();
      cleanup(s.dir);
    });
  }

  test("a Bridge error code is passed through verbatim", async () => {
    const code = await h.fail("task.get", { task_id: "agt_000000000000000000000000" });
    expect(code).toBe("AGENT_TASK_NOT_FOUND");
  });

  test("missing socket and a silent server are AGENT_BRIDGE_UNAVAILABLE", async () => {
    const dir = tempDir();
    await expect(new BridgeClient({ path: path.join(dir, "none.sock") }).call("runtime.list", {})).rejects.toMatchObject({
      code: "AGENT_BRIDGE_UNAVAILABLE",
    });
    const s = await fakeServer(() => null);
    // the client's own 300 ms timeout ends the call (a hang fails the test's timeout)
    await expect(new BridgeClient({ path: s.path }, 300).call("runtime.list", {})).rejects.toMatchObject({
      code: "AGENT_BRIDGE_UNAVAILABLE",
    });
    s.close();
    cleanup(s.dir);
    cleanup(dir);
  });
});
