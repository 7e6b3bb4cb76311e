// The Bridge endpoint on Windows: a named pipe whose name only disambiguates, plus a per-user
// random token (kept in the private state directory) that a client must present as its first line,
// and a DACL that admits the current user only (platform/windows/pipe-dacl.ts).
// The token is compared in constant time before any request is dispatched. Connections go through
// the same Connection/ConnectionSet as the unix socket, so the cap, the timeouts and the queue cap
// are the same; until the token line arrives the connection's idle clock runs untouched.
import net from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import { ServerfsError } from "../../errors.ts";
import { socketBounds, type SocketBounds } from "./bounds.ts";
import { ConnectionSet, type Dispatch, type RawSocket } from "./connection.ts";
import { LineDecoder, failure } from "./protocol.ts";
import type { BridgeListener } from "./server.posix.ts";
import { restrictPipeToCurrentUser } from "../../../platform/windows/pipe-dacl.ts";

export interface WindowsServerOptions {
  pipePath: string;
  token: string;
  dispatch: Dispatch;
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Connection cap, timeouts and queue cap (defaults in bounds.ts). */
  bounds?: Partial<SocketBounds>;
  /** Test seam: applies the current-user-only DACL to the listening pipe; false = could not. */
  restrictPipe?: (pipePath: string) => boolean;
}

/**
 * node:net buffers every write itself; report "full" once its buffer is past the high-water mark so
 * the rest waits in the Connection's own bounded queue instead of growing node's without limit.
 */
function rawSocket(socket: net.Socket): RawSocket {
  return {
    write: (d) => {
      if (socket.destroyed || socket.writableNeedDrain) return 0;
      socket.write(d);
      return d.byteLength;
    },
    end: () => socket.end(),
    terminate: () => socket.destroy(),
  };
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

export async function listenWindowsPipe(opts: WindowsServerOptions): Promise<BridgeListener> {
  const log = opts.log ?? (() => {});
  const expected = digest(opts.token);
  const live = new ConnectionSet(opts.dispatch, log, socketBounds(opts.bounds));
  const server = net.createServer((socket) => {
    const conn = live.open(rawSocket(socket));
    socket.on("drain", () => conn.onDrain());
    socket.on("close", () => conn.onClose());
    socket.on("error", () => conn.onClose());
    const handshake = new LineDecoder(4096);
    let authorized = false;
    socket.on("data", (chunk: Buffer) => {
      if (conn.isClosing) return;
      const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (authorized) return conn.onData(bytes);
      const nl = bytes.indexOf(0x0a);
      const lines = handshake.push(bytes);
      const first = lines[0];
      if (handshake.overflow || (nl !== -1 && !first)) {
        return conn.rejectAndClose(failure(null, "PEER_NOT_AUTHORIZED", "peer is not authorized"));
      }
      if (!first) return;
      let token: unknown;
      try {
        token = (JSON.parse(new TextDecoder().decode(first)) as { serverfs_pipe_token?: unknown }).serverfs_pipe_token;
      } catch {
        token = undefined;
      }
      if (typeof token !== "string" || !timingSafeEqual(digest(token), expected)) {
        log("ipc.peer_rejected", {});
        return conn.rejectAndClose(failure(null, "PEER_NOT_AUTHORIZED", "peer is not authorized"));
      }
      authorized = true;
      const rest = bytes.subarray(nl + 1);
      if (rest.byteLength > 0) conn.onData(rest);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", () => reject(new ServerfsError("SOCKET_PATH_IN_USE", "the Bridge pipe is already in use")));
    server.listen(opts.pipePath, () => resolve());
  });
  // Fail closed: a pipe other users could open is not served, token or not.
  if (!(opts.restrictPipe ?? restrictPipeToCurrentUser)(opts.pipePath)) {
    live.dropAll();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw new ServerfsError("SOCKET_DIRECTORY_UNSAFE", "the Bridge pipe could not be restricted to the current user");
  }
  return {
    endpoint: opts.pipePath,
    connectionCount: () => live.size,
    // server.close() alone waits for every open connection (a long poll, a silent peer) to end.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        live.dropAll();
      }),
  };
}
