// The Windows endpoint's mutual handshake (src/bridge/ipc/handshake.ts). Named pipes exist only on
// Windows, but the server is node:net, which listens on a unix socket path the same way on Linux,
// and the client connects to either: the handshake runs here for real, over real sockets, against
// the real listener and against impostors ("squatters") that hold the endpoint instead of the
// Bridge. The squatter on a real named pipe is test/platform/windows-pipe-squat.test.ts.
import { expect, test } from "bun:test";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { RawBridgeClient as BridgeClient } from "../../src/bridge/ipc/client.ts";
import { bridgeClientFor } from "../../src/bridge/ipc/connect.ts";
import { ClientHandshake, MAX_HANDSHAKE_LINE_BYTES, clientProof, serverProof } from "../../src/bridge/ipc/handshake.ts";
import { listenWindowsPipe } from "../../src/bridge/ipc/server.windows.ts";
import { deploymentPaths } from "../../src/config/paths.ts";
import { ensureBridgeToken } from "../../platform/token.ts";
import { squatEndpoint, squatterHello } from "../support/pipe-squatter.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup } from "./helpers.ts";

const TOKEN = "a".repeat(64);
const OTHER = "b".repeat(64);
const hex = (n: number, c = "0") => c.repeat(n * 2);

/** The real Windows listener on a unix socket path; counts what it dispatched and logged. */
async function realBridge(token = TOKEN, bounds: { maxConnections?: number } = {}) {
  const dir = tempDir("sfs-hs-");
  const p = path.join(dir, "pipe.sock");
  const dispatched: string[] = [];
  const logs: string[] = [];
  const listener = await listenWindowsPipe({
    pipePath: p,
    token,
    dispatch: async (method) => {
      dispatched.push(method);
      return { hello: true };
    },
    log: (event) => logs.push(event),
    bounds,
  });
  return {
    path: p,
    dispatched,
    logs,
    async close() {
      await listener.close();
      cleanup(dir);
    },
  };
}

/** An impostor holding a fresh endpoint (test/support/pipe-squatter.ts); `path` is where it listens. */
async function squatter(onConnect: (s: net.Socket, received: () => string) => void) {
  const dir = tempDir("sfs-sq-");
  const p = path.join(dir, "pipe.sock");
  const held = await squatEndpoint(p, onConnect);
  return {
    path: p,
    received: held.received,
    async close() {
      await held.close();
      cleanup(dir);
    },
  };
}

/** Reads lines from a socket as they come. */
function lineReader(s: net.Socket) {
  let buf = "";
  const waiting: ((line: string) => void)[] = [];
  const ready: string[] = [];
  s.on("data", (d: Buffer) => {
    buf += d.toString("latin1");
    let nl: number;
    while ((nl = buf.indexOf("\n")) !== -1) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line);
      else ready.push(line);
    }
  });
  return () => new Promise<string>((resolve) => (ready.length > 0 ? resolve(ready.shift()!) : waiting.push(resolve)));
}

/** A raw client session: connect, then hand the socket to `script`; resolves with every byte the server sent. */
function rawSession(p: string, script: (s: net.Socket, nextLine: () => Promise<string>) => void): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ path: p });
    const chunks: Buffer[] = [];
    s.on("data", (d: Buffer) => chunks.push(d));
    const nextLine = lineReader(s);
    s.on("connect", () => script(s, nextLine));
    const done = () => resolve(Buffer.concat(chunks).toString("latin1"));
    s.on("close", done);
    s.on("error", () => {});
  });
}

const helloLine = (nonce = hex(32, "1")) => squatterHello(nonce);
const request = `${JSON.stringify({ protocol_version: 1, request_id: "r1", method: "bridge.status", params: {} })}\n`;
const refusal = { request_id: null, ok: false, error: { code: "PEER_NOT_AUTHORIZED", message: "peer is not authorized" } };

test("a client and the Bridge holding the same token authenticate each other, then the request is served", async () => {
  const b = await realBridge();
  try {
    expect(await new BridgeClient({ path: b.path, pipeToken: TOKEN }).call("runtime.list", {})).toEqual({ hello: true });
    // The token is read per call when given as a function.
    expect(await new BridgeClient({ path: b.path, pipeToken: () => TOKEN }).call("bridge.status", {})).toEqual({ hello: true });
    expect(b.dispatched).toEqual(["runtime.list", "bridge.status"]);
  } finally {
    await b.close();
  }
});

test("a client with the wrong token is refused before anything is dispatched, and learns the Bridge is not proven", async () => {
  const b = await realBridge();
  try {
    const err = await new BridgeClient({ path: b.path, pipeToken: OTHER }).call("runtime.list", {}).catch((e) => e);
    expect(err).toMatchObject({ code: "BRIDGE_NOT_AUTHENTIC" });
    expect(err.message).toContain("it answered PEER_NOT_AUTHORIZED instead");
    // Without a token the client does not handshake at all; the Bridge refuses its request line.
    const sent = await rawSession(b.path, (s) => s.write(request));
    const [hello, answer] = sent.trim().split("\n");
    expect(JSON.parse(hello!)).toMatchObject({ serverfs_handshake: "server_hello", version: 1 });
    expect(JSON.parse(answer!)).toEqual(refusal);
    expect(b.dispatched).toEqual([]);
    expect(b.logs.filter((e) => e === "ipc.peer_rejected")).toHaveLength(2);
  } finally {
    await b.close();
  }
});

test("the Bridge never sends its proof to a client whose proof is wrong, and answers nothing that came with it", async () => {
  const b = await realBridge();
  try {
    // A client that knows the protocol but not the token: a proof made with another token.
    const sent = await rawSession(b.path, async (s, nextLine) => {
      const hs = new ClientHandshake(OTHER);
      s.write(Buffer.concat([Buffer.from(hs.respond(Buffer.from(await nextLine()))), Buffer.from(request)]));
    });
    const lines = sent.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toEqual(refusal);
    expect(sent).not.toContain("server_proof");
    expect(b.dispatched).toEqual([]);
  } finally {
    await b.close();
  }
});

test("a Bridge handshake line over the cap is refused, and so is a line that never ends", async () => {
  const b = await realBridge();
  try {
    const long = await rawSession(b.path, (s) => s.write(`${"x".repeat(MAX_HANDSHAKE_LINE_BYTES + 1)}\n${request}`));
    expect(JSON.parse(long.trim().split("\n")[1]!)).toEqual(refusal);
    const endless = await rawSession(b.path, (s) => s.write("y".repeat(64 * 1024)));
    expect(JSON.parse(endless.trim().split("\n")[1]!)).toEqual(refusal);
    expect(b.dispatched).toEqual([]);
  } finally {
    await b.close();
  }
});

test("a client proof recorded in one session does not open another: the Bridge's nonce is fresh", async () => {
  const b = await realBridge();
  try {
    let recorded = "";
    const first = await rawSession(b.path, async (s, nextLine) => {
      const hs = new ClientHandshake(TOKEN);
      recorded = Buffer.from(hs.respond(Buffer.from(await nextLine()))).toString("latin1");
      s.write(recorded);
      hs.confirm(Buffer.from(await nextLine()));
      s.end();
    });
    expect(first).toContain("server_proof");
    const replayed = await rawSession(b.path, async (s, nextLine) => {
      await nextLine();
      s.write(recorded + request);
    });
    expect(JSON.parse(replayed.trim().split("\n")[1]!)).toEqual(refusal);
    expect(b.dispatched).toEqual([]);
  } finally {
    await b.close();
  }
});

test("a squatter that speaks first with anything but the hello is refused and is sent nothing", async () => {
  const firsts = [
    "garbage\n",
    request,
    `${JSON.stringify({ request_id: "r", ok: true, result: { pid: 1 } })}\n`,
    `${JSON.stringify(refusal)}\n`,
    `${JSON.stringify({ serverfs_handshake: "server_hello", version: 2, nonce: hex(32) })}\n`,
    `${JSON.stringify({ serverfs_handshake: "server_hello", version: 1, nonce: hex(16) })}\n`,
    `${JSON.stringify({ serverfs_handshake: "server_hello", version: 1, nonce: hex(32), extra: 1 })}\n`,
    `${JSON.stringify({ serverfs_handshake: "server_proof", version: 1, proof: hex(32) })}\n`,
    `\xff\xfe${helloLine().slice(2)}`,
  ];
  for (const first of firsts) {
    const sq = await squatter((s) => s.write(Buffer.from(first, "latin1")));
    try {
      const err = await new BridgeClient({ path: sq.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {}).catch((e) => e);
      expect({ first, code: err.code }).toEqual({ first, code: "BRIDGE_NOT_AUTHENTIC" });
      expect(sq.received()).toEqual([""]);
    } finally {
      await sq.close();
    }
  }
});

test("a squatter that sends an over-long line, or one that never ends, is refused and is sent nothing", async () => {
  for (const first of [`${"z".repeat(MAX_HANDSHAKE_LINE_BYTES + 1)}\n`, "z".repeat(MAX_HANDSHAKE_LINE_BYTES + 1), "z".repeat(2 * 1024 * 1024)]) {
    const sq = await squatter((s) => s.write(first));
    try {
      const err = await new BridgeClient({ path: sq.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {}).catch((e) => e);
      expect(err).toMatchObject({ code: "BRIDGE_NOT_AUTHENTIC", message: expect.stringContaining("over-long line") });
      expect(sq.received()).toEqual([""]);
    } finally {
      await sq.close();
    }
  }
});

test("a squatter that follows the protocol without the token gets a proof it cannot use, never the token or a request", async () => {
  const fakeProofs: Record<string, (clientLine: string) => string> = {
    // A proof made with a token it guessed.
    "wrong token": (line) => serverProof(OTHER, Buffer.from(JSON.parse(line).nonce, "hex"), Buffer.from(hex(32, "1"), "hex")).toString("hex"),
    // The client's own proof reflected back: the domain separators differ per direction.
    reflected: (line) => JSON.parse(line).proof,
    zeros: () => hex(32),
  };
  for (const [name, fake] of Object.entries(fakeProofs)) {
    const sq = await squatter((s, received) => {
      s.write(helloLine());
      s.on("data", () => {
        const text = received();
        if (!text.includes("\n")) return;
        s.write(`${JSON.stringify({ serverfs_handshake: "server_proof", version: 1, proof: fake(text.slice(0, text.indexOf("\n"))) })}\n`);
      });
    });
    try {
      const err = await new BridgeClient({ path: sq.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {}).catch((e) => e);
      expect({ name, code: err.code }).toEqual({ name, code: "BRIDGE_NOT_AUTHENTIC" });
      const [got] = sq.received();
      // Exactly one line, the client's proof; no token, no request.
      expect(got!.split("\n")).toHaveLength(2);
      expect(JSON.parse(got!)).toMatchObject({ serverfs_handshake: "client_proof", version: 1 });
      expect(got).not.toContain(TOKEN);
      expect(got).not.toContain("bridge.status");
    } finally {
      await sq.close();
    }
  }
});

test("a Bridge's messages recorded in one session do not authenticate it to the next client: the client's nonce is fresh", async () => {
  const b = await realBridge();
  let recordedHello = "";
  let recordedProof = "";
  try {
    await rawSession(b.path, async (s, nextLine) => {
      const hs = new ClientHandshake(TOKEN);
      recordedHello = await nextLine();
      s.write(hs.respond(Buffer.from(recordedHello)));
      recordedProof = await nextLine();
      hs.confirm(Buffer.from(recordedProof));
      s.end();
    });
  } finally {
    await b.close();
  }
  const sq = await squatter((s, received) => {
    s.write(`${recordedHello}\n`);
    s.on("data", () => {
      if (received().includes("\n")) s.write(`${recordedProof}\n`);
    });
  });
  try {
    const err = await new BridgeClient({ path: sq.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {}).catch((e) => e);
    expect(err).toMatchObject({ code: "BRIDGE_NOT_AUTHENTIC", message: expect.stringContaining("wrong proof") });
    expect(sq.received()[0]!.split("\n")).toHaveLength(2);
    expect(sq.received()[0]).not.toContain("bridge.status");
  } finally {
    await sq.close();
  }
});

test("a Bridge over its connection cap refuses before any handshake: the client cannot trust that, and says what it got", async () => {
  const b = await realBridge(TOKEN, { maxConnections: 1 });
  const holder = net.connect({ path: b.path });
  try {
    await new Promise<void>((resolve) => holder.once("data", () => resolve()));
    const err = await new BridgeClient({ path: b.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {}).catch((e) => e);
    expect(err).toMatchObject({ code: "BRIDGE_NOT_AUTHENTIC", message: expect.stringContaining("it answered CONNECTION_LIMIT_REACHED instead") });
    expect(b.dispatched).toEqual([]);
  } finally {
    holder.destroy();
    await b.close();
  }
});

test("the two proofs are separated by direction and bound to both nonces", () => {
  const n1 = Buffer.alloc(32, 1);
  const n2 = Buffer.alloc(32, 2);
  expect(clientProof(TOKEN, n1, n2).equals(serverProof(TOKEN, n2, n1))).toBe(false);
  expect(clientProof(TOKEN, n1, n2).equals(clientProof(TOKEN, n2, n1))).toBe(false);
  expect(clientProof(TOKEN, n1, n2).equals(clientProof(OTHER, n1, n2))).toBe(false);
  expect(clientProof(TOKEN, n1, n2).equals(clientProof(TOKEN, n1, n2))).toBe(true);
});

test("a squatter that closes before its hello is an unreachable Bridge; after the client's proof, an unproven one", async () => {
  const mute = await squatter((s) => s.end());
  try {
    await expect(new BridgeClient({ path: mute.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {})).rejects.toMatchObject({
      code: "AGENT_BRIDGE_UNAVAILABLE",
    });
    expect(mute.received()).toEqual([""]);
  } finally {
    await mute.close();
  }
  const quitter = await squatter((s, received) => {
    s.write(helloLine());
    s.on("data", () => received().includes("\n") && s.end());
  });
  try {
    await expect(new BridgeClient({ path: quitter.path, pipeToken: TOKEN }, 10_000).call("bridge.status", {})).rejects.toMatchObject({
      code: "BRIDGE_NOT_AUTHENTIC",
    });
  } finally {
    await quitter.close();
  }
});

test("a Windows client with no token file, or an unsafe one, connects to nothing and says why", async () => {
  const stateDir = path.join(tempDir("sfs-hsc-"), "state");
  fs.mkdirSync(stateDir, { mode: 0o700 });
  const socketPath = deploymentPaths({ server: { state_dir: stateDir } }).socketPath;
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  let connections = 0;
  const server = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(socketPath, () => resolve()));
  try {
    const client = bridgeClientFor({ server: { state_dir: stateDir } }, { timeoutMs: 10_000, platform: "win32" });
    await expect(client.call("bridge.status", {})).rejects.toMatchObject({ code: "AGENT_BRIDGE_UNAVAILABLE", message: expect.stringContaining("token") });
    ensureBridgeToken(stateDir);
    fs.chmodSync(path.join(stateDir, "bridge.token"), 0o644);
    await expect(client.call("bridge.status", {})).rejects.toMatchObject({ code: "STATE_DIRECTORY_UNSAFE" });
    fs.writeFileSync(path.join(stateDir, "bridge.token"), "short\n", { mode: 0o600 });
    fs.chmodSync(path.join(stateDir, "bridge.token"), 0o600);
    await expect(client.call("bridge.status", {})).rejects.toMatchObject({ code: "BRIDGE_IDENTITY_UNAVAILABLE" });
    expect(connections).toBe(0);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

