// The Windows endpoint's token handshake. Named pipes exist only on Windows, but the server is
// node:net, which listens on a unix socket path the same way on Linux: the handshake logic (token
// first, constant-time compare, PEER_NOT_AUTHORIZED then close) is exercised here for real.
import { expect, test } from "bun:test";
import net from "node:net";
import path from "node:path";
import { RawBridgeClient as BridgeClient } from "../../src/bridge/ipc/client.ts";
import { listenWindowsPipe } from "../../src/bridge/ipc/server.windows.ts";
import { tempDir } from "../support/temp.ts";
import { cleanup } from "./helpers.ts";

function raw(p: string, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect({ path: p });
    let out = "";
    s.on("connect", () => s.write(text));
    s.on("data", (d) => (out += d.toString()));
    s.on("close", () => resolve(out));
    s.on("error", () => resolve(out));
  });
}

test("the right token is required before any request is dispatched", async () => {
  const dir = tempDir();
  const p = path.join(dir, "pipe.sock");
  let dispatched = 0;
  const listener = await listenWindowsPipe({
    pipePath: p,
    token: "t0ken-of-this-user",
    dispatch: async () => {
      dispatched++;
      return { hello: true };
    },
    // A unix socket has no DACL; the pipe's is tested under Windows (test/platform/windows-bridge.test.ts).
    restrictPipe: () => true,
  });
  try {
    expect(await new BridgeClient({ path: p, pipeToken: "t0ken-of-this-user" }).call("runtime.list", {})).toEqual({ hello: true });
    await expect(new BridgeClient({ path: p, pipeToken: "wrong" }).call("runtime.list", {})).rejects.toMatchObject({ code: "PEER_NOT_AUTHORIZED" });
    await expect(new BridgeClient({ path: p }).call("runtime.list", {})).rejects.toMatchObject({ code: "PEER_NOT_AUTHORIZED" });
    const req = `${JSON.stringify({ protocol_version: 1, request_id: "r", method: "runtime.list", params: {} })}\n`;
    expect(JSON.parse((await raw(p, req)).trim())).toEqual({ request_id: null, ok: false, error: { code: "PEER_NOT_AUTHORIZED", message: "peer is not authorized" } });
    expect(dispatched).toBe(1);
  } finally {
    await listener.close();
    cleanup(dir);
  }
});

test("a pipe whose DACL cannot be set is not served: SOCKET_DIRECTORY_UNSAFE, nothing listening", async () => {
  const dir = tempDir();
  const p = path.join(dir, "pipe.sock");
  let dispatched = 0;
  try {
    await expect(
      listenWindowsPipe({
        pipePath: p,
        token: "t0ken-of-this-user",
        dispatch: async () => {
          dispatched++;
          return {};
        },
        restrictPipe: () => false,
      }),
    ).rejects.toMatchObject({ code: "SOCKET_DIRECTORY_UNSAFE" });
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect({ path: p });
      s.on("connect", () => resolve("connected"));
      s.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
    });
    expect(refused).not.toBe("connected");
    expect(dispatched).toBe(0);
  } finally {
    cleanup(dir);
  }
});
