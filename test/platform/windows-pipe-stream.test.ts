// The Bridge's own named-pipe transport (platform/windows/pipe-stream.ts and its I/O thread) on real
// pipes: each end learns the other's pid from the kernel, bytes arrive whole and in order through
// the 64 KiB chunks in both directions, what a server wrote before it ended is still read, a name
// someone else holds is refused, more clients than a wait-on-handles design could serve are served
// at once, and a process whose streams are all closed exits by itself (the I/O thread never keeps
// it alive). Windows-only; the Windows lane runs it under Wine.
import { describe, expect, test } from "bun:test";
import net from "node:net";
import path from "node:path";
import { connectPipe, listenPipe } from "../../platform/windows/pipe-stream.ts";
import { pipeSddl } from "../../platform/windows/pipe-dacl.ts";
import type { LocalStream } from "../../platform/types.ts";
import { onWindows } from "./windows-helpers.ts";
import { readThroughNewline } from "../support/proc.ts";
import { mulberry32 } from "../support/prng.ts";

let serial = 0;
const pipePath = () => `\\\\.\\pipe\\serverfs-stream-test-${process.pid}-${++serial}`;
const REPO = path.resolve(import.meta.dir, "../..");
const STREAM_MODULE = path.join(REPO, "platform/windows/pipe-stream.ts").replaceAll("\\", "/");

/** Collects everything a stream delivers until it closes. */
function collect(stream: LocalStream): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  return new Promise((resolve) => {
    stream.onData = (bytes) => chunks.push(bytes.slice());
    stream.onClose = () => resolve(Buffer.concat(chunks));
  });
}

/** Writes all of `bytes`, following the stream's drains, then calls `done` (if any). */
function writeAll(stream: LocalStream, bytes: Uint8Array, done?: () => void): void {
  let offset = 0;
  const pump = () => {
    while (offset < bytes.byteLength) {
      const n = stream.write(bytes.subarray(offset));
      if (n === 0) return;
      offset += n;
    }
    done?.();
  };
  stream.onDrain = pump;
  pump();
}

function pattern(length: number, seed: number): Uint8Array {
  const next = mulberry32(seed);
  return Uint8Array.from({ length }, () => Math.floor(next() * 256));
}

async function opened(pipe: string): Promise<LocalStream> {
  const s = await connectPipe(pipe);
  if (typeof s === "string") throw new Error(`connect failed: ${s}`);
  return s;
}

/** A child bun process that runs `source` (it can import the transport as STREAM). */
function child(source: string) {
  const code = `import * as STREAM from ${JSON.stringify(STREAM_MODULE)};\n${source}`;
  return Bun.spawn([process.execPath, "-e", code], { stdout: "pipe", stderr: "pipe", stdin: "ignore" });
}

describe.skipIf(!onWindows)("the Bridge's named-pipe transport (needs Windows: named pipes)", () => {
  test("the server learns its client's pid and user from the kernel, and the client its server's", async () => {
    const pipe = pipePath();
    const peers: Array<LocalStream["peer"]> = [];
    const listener = await listenPipe(pipe, pipeSddl(), (s) => {
      peers.push(s.peer);
      s.onData = (bytes) => {
        s.write(bytes);
        s.end();
      };
    }, () => {});
    try {
      // A client in another process: its pid, not ours, is what the server records.
      const c = child(`
        const s = await STREAM.connectPipe(${JSON.stringify(pipe)});
        if (typeof s === "string") { console.log("FAILED " + s); process.exit(1); }
        const echoed = new Promise((r) => { s.onData = (b) => r(Buffer.from(b).toString()); });
        s.write(new TextEncoder().encode("ping"));
        console.log(JSON.stringify({ pid: process.pid, serverPeer: s.peer, echoed: await echoed }));
        s.destroy();
      `);
      const line = await readThroughNewline(c.stdout);
      expect(await c.exited).toBe(0);
      const seen = JSON.parse(line) as { pid: number; serverPeer: { pid: number; sameUser: boolean }; echoed: string };
      expect(seen.echoed).toBe("ping");
      expect(seen.serverPeer).toEqual({ pid: process.pid, sameUser: true });
      expect(peers).toEqual([{ pid: seen.pid, sameUser: true }]);
    } finally {
      await listener.close();
    }
  });

  test("5 MiB each way arrive whole and in order through 64 KiB chunks; what the server wrote before end() is still read", async () => {
    const pipe = pipePath();
    const up = pattern(5 * 1024 * 1024 + 17, 1);
    const down = pattern(5 * 1024 * 1024 + 3, 2);
    let received: Promise<Buffer> | null = null;
    const listener = await listenPipe(pipe, pipeSddl(), (s) => {
      const chunks: Uint8Array[] = [];
      let total = 0;
      received = new Promise((resolve) => {
        s.onData = (bytes) => {
          chunks.push(bytes.slice());
          total += bytes.byteLength;
          if (total === up.byteLength) {
            resolve(Buffer.concat(chunks));
            writeAll(s, down, () => s.end());
          }
        };
      });
    }, () => {});
    try {
      const client = await opened(pipe);
      const back = collect(client);
      writeAll(client, up);
      const got = await back;
      expect(Buffer.compare(await received!, Buffer.from(up))).toBe(0);
      expect(got.byteLength).toBe(down.byteLength);
      expect(Buffer.compare(got, Buffer.from(down))).toBe(0);
    } finally {
      await listener.close();
    }
  });

  test("a name another process holds is refused: SOCKET_PATH_IN_USE, and that process keeps its clients", async () => {
    const pipe = pipePath();
    const holder = net.createServer((s) => s.end("holder\n"));
    await new Promise<void>((resolve) => holder.listen(pipe, () => resolve()));
    try {
      await expect(listenPipe(pipe, pipeSddl(), () => {}, () => {})).rejects.toMatchObject({ code: "SOCKET_PATH_IN_USE" });
      const s = await opened(pipe);
      expect((await collect(s)).toString()).toBe("holder\n");
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  test("300 clients at once are all served (one completion port, no 64-handle wait limit)", async () => {
    const pipe = pipePath();
    const listener = await listenPipe(pipe, pipeSddl(), (s) => {
      s.onData = (bytes) => {
        s.write(bytes);
        s.end();
      };
    }, () => {});
    try {
      const clients: LocalStream[] = [];
      for (let i = 0; i < 300; i++) {
        // Every instance may be taken for a moment: the server adds the next one as it takes a client.
        // (Retry from a fresh task, so the listener's own messages get their turn.)
        let s = await connectPipe(pipe);
        while (s === "busy") {
          await new Promise<void>((resolve) => setImmediate(resolve));
          s = await connectPipe(pipe);
        }
        if (typeof s === "string") throw new Error(`client ${i}: ${s}`);
        clients.push(s);
      }
      const echoes = clients.map((s, i) => {
        const done = collect(s);
        s.write(new TextEncoder().encode(`client ${i}`));
        return done;
      });
      const texts = (await Promise.all(echoes)).map((b) => b.toString());
      expect(texts).toEqual(clients.map((_, i) => `client ${i}`));
    } finally {
      await listener.close();
    }
  }, 60_000);

  test("a process exits by itself once its streams are closed: the I/O thread never holds it", async () => {
    const pipe = pipePath();
    const listener = await listenPipe(pipe, pipeSddl(), (s) => {
      s.onData = () => s.end();
    }, () => {});
    try {
      const c = child(`
        const s = await STREAM.connectPipe(${JSON.stringify(pipe)});
        if (typeof s === "string") { console.log("FAILED " + s); process.exit(1); }
        s.onClose = () => console.log("closed");
        s.write(new TextEncoder().encode("bye"));
      `);
      // The child never calls process.exit: it ends only if nothing keeps its event loop alive.
      expect(await readThroughNewline(c.stdout)).toBe("closed\n");
      expect(await c.exited).toBe(0);
    } finally {
      await listener.close();
    }
  });

  test("a connected client sees the server's end as the end of its stream; a closed listener's name is free again", async () => {
    const pipe = pipePath();
    const listener = await listenPipe(pipe, pipeSddl(), (s) => s.end(), () => {});
    const s = await opened(pipe);
    expect((await collect(s)).byteLength).toBe(0);
    await listener.close();
    expect(await connectPipe(pipe)).toBe("absent");
    const again = await listenPipe(pipe, pipeSddl(), (x) => x.end(), () => {});
    await again.close();
  });
});
