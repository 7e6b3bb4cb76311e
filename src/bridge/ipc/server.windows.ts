// The Bridge endpoint on Windows: a named pipe whose name anyone can compute, so the name proves
// nothing. Each connection opens with a mutual challenge-response over the per-user token kept in
// the private state directory (./handshake.ts): the client proves it holds the token before
// anything is dispatched, and the server proves it back before the client sends a request, so the
// token itself never crosses the pipe. A DACL admits the current user only
// (platform/windows/pipe-dacl.ts). Connections go through the same Connection/ConnectionSet as the
// unix socket, so the cap, the timeouts and the queue cap are the same; until the client's proof
// arrives the connection's idle clock runs untouched, so the whole handshake must finish within
// the idle timeout, and each handshake line within MAX_HANDSHAKE_LINE_BYTES.
import net from "node:net";
import { ServerfsError } from "../../errors.ts";
import { socketBounds, type SocketBounds } from "./bounds.ts";
import { ConnectionSet, type Dispatch, type RawSocket } from "./connection.ts";
import { LineDecoder, failure } from "./protocol.ts";
import { MAX_HANDSHAKE_LINE_BYTES, ServerHandshake } from "./handshake.ts";
import type { BridgeListener } from "./server.posix.ts";
import { restrictPipeToCurrentUser } from "../../../platform/windows/pipe-dacl.ts";
import { pipeNameHeld } from "../../../platform/windows/pipe.ts";

export interface WindowsServerOptions {
  pipePath: string;
  token: string;
  dispatch: Dispatch;
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Connection cap, timeouts and queue cap (defaults in bounds.ts). */
  bounds?: Partial<SocketBounds>;
  /** Test seam: applies the current-user-only DACL to the listening pipe; false = could not. */
  restrictPipe?: (pipePath: string) => boolean;
  /** Test seam: whether some process already holds the pipe name (default: WaitNamedPipeW). */
  nameHeld?: (pipePath: string) => boolean;
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

export async function listenWindowsPipe(opts: WindowsServerOptions): Promise<BridgeListener> {
  const log = opts.log ?? (() => {});
  // Someone holds the name (a squatter waiting for our clients): do not add our instances to theirs,
  // where a client could reach either. Under Wine 8 listen itself succeeds on a name another
  // process holds (measured), so this check is what refuses it there. Clients refuse whoever
  // cannot prove the token either way.
  if ((opts.nameHeld ?? pipeNameHeld)(opts.pipePath)) {
    throw new ServerfsError("SOCKET_PATH_IN_USE", "another process already holds the Bridge pipe name");
  }
  const live = new ConnectionSet(opts.dispatch, log, socketBounds(opts.bounds));
  const server = net.createServer((socket) => {
    const conn = live.open(rawSocket(socket));
    socket.on("drain", () => conn.onDrain());
    socket.on("close", () => conn.onClose());
    socket.on("error", () => conn.onClose());
    // Refused for the connection cap: the refusal is already on its way, no handshake.
    if (conn.isClosing) return;
    const handshake = new ServerHandshake(opts.token);
    const decoder = new LineDecoder(MAX_HANDSHAKE_LINE_BYTES);
    let authorized = false;
    const refuse = () => {
      log("ipc.peer_rejected", {});
      conn.rejectAndClose(failure(null, "PEER_NOT_AUTHORIZED", "peer is not authorized"));
    };
    socket.write(handshake.hello);
    socket.on("data", (chunk: Buffer) => {
      if (conn.isClosing) return;
      const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (authorized) return conn.onData(bytes);
      const nl = bytes.indexOf(0x0a);
      const first = decoder.push(bytes)[0];
      if (decoder.overflow) return refuse();
      if (first === undefined) return;
      const proof = handshake.answer(first);
      if (proof === null) return refuse();
      authorized = true;
      decoder.reset();
      socket.write(proof);
      // A well-behaved client waits for our proof; whatever came early is its first request.
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
