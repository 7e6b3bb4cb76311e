// The Bridge endpoint on Windows: a named pipe whose name anyone can compute, so the name proves
// nothing. serverfs creates the pipe itself (platform/local-stream.ts): a protected DACL that
// admits the current user and denies network logons is there from the first instance on, remote
// clients are rejected, and each peer's pid and user come from the kernel; a peer that is not the
// current user is refused before it is read. A name someone else holds (a squatter waiting for our
// clients) is SOCKET_PATH_IN_USE: the Bridge never adds its instances to theirs, where a client
// could reach either.
//
// Each connection then opens with a mutual challenge-response over the per-user token kept in the
// private state directory (./handshake.ts): the client proves it holds the token before anything
// is dispatched, and the server proves it back before the client sends a request, so the token
// itself never crosses the pipe. Connections go through the same Connection/ConnectionSet as the
// unix socket, so the cap, the timeouts and the queue cap are the same; until the client's proof
// arrives the connection's idle clock runs untouched, so the whole handshake must finish within
// the idle timeout, and each handshake line within MAX_HANDSHAKE_LINE_BYTES.
import { ServerfsError } from "../../errors.ts";
import { socketBounds, type SocketBounds } from "./bounds.ts";
import { ConnectionSet, type Dispatch } from "./connection.ts";
import { LineDecoder, failure } from "./protocol.ts";
import { MAX_HANDSHAKE_LINE_BYTES, ServerHandshake } from "./handshake.ts";
import type { BridgeListener } from "./server.posix.ts";
import { listenLocal } from "../../../platform/local-stream.ts";
import type { LocalStream } from "../../../platform/types.ts";
import { pipeSddl } from "../../../platform/windows/pipe-dacl.ts";

export interface WindowsServerOptions {
  pipePath: string;
  token: string;
  dispatch: Dispatch;
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Connection cap, timeouts and queue cap (defaults in bounds.ts). */
  bounds?: Partial<SocketBounds>;
  /** Test seam: the pipe's SDDL (default: the current user only, no network logons). */
  sddl?: () => string;
}

export async function listenWindowsPipe(opts: WindowsServerOptions): Promise<BridgeListener> {
  const log = opts.log ?? (() => {});
  const sddl = () => {
    try {
      return (opts.sddl ?? pipeSddl)();
    } catch {
      throw new ServerfsError("SOCKET_DIRECTORY_UNSAFE", "the Bridge pipe could not be restricted to the current user");
    }
  };
  const live = new ConnectionSet(opts.dispatch, log, socketBounds(opts.bounds));
  const accept = (stream: LocalStream) => {
    const conn = live.open({ write: (d) => stream.write(d), end: () => stream.end(), terminate: () => stream.destroy() });
    stream.onDrain = () => conn.onDrain();
    stream.onClose = () => conn.onClose();
    // Refused for the connection cap: the refusal is already on its way, no handshake.
    if (conn.isClosing) return;
    const refuse = (fields: Record<string, unknown>) => {
      log("ipc.peer_rejected", fields);
      conn.rejectAndClose(failure(null, "PEER_NOT_AUTHORIZED", "peer is not authorized"));
    };
    // The kernel's word on the peer (null only for a unix-socket path in tests): another user is
    // refused before a byte of theirs is read or a nonce of ours is sent.
    if (stream.peer !== null && !stream.peer.sameUser) return refuse({ reason: "peer_user", peer_pid: stream.peer.pid });
    const handshake = new ServerHandshake(opts.token);
    const decoder = new LineDecoder(MAX_HANDSHAKE_LINE_BYTES);
    let authorized = false;
    conn.sendBytes(handshake.hello);
    stream.onData = (bytes: Uint8Array) => {
      if (conn.isClosing) return;
      if (authorized) return conn.onData(bytes);
      const nl = bytes.indexOf(0x0a);
      const first = decoder.push(bytes)[0];
      if (decoder.overflow) return refuse({ reason: "handshake_line_too_long", peer_pid: stream.peer?.pid ?? null });
      if (first === undefined) return;
      const proof = handshake.answer(first);
      if (proof === null) return refuse({ reason: "handshake_failed", peer_pid: stream.peer?.pid ?? null });
      authorized = true;
      decoder.reset();
      conn.sendBytes(proof);
      // A well-behaved client waits for our proof; whatever came early is its first request.
      const rest = bytes.subarray(nl + 1);
      if (rest.byteLength > 0) conn.onData(rest);
    };
  };
  const listener = await listenLocal(opts.pipePath, sddl, accept, (what) => log("ipc.endpoint_degraded", { what }));
  return {
    endpoint: opts.pipePath,
    connectionCount: () => live.size,
    // Stop taking clients, and cut the connections at once: waiting for them (a long poll, a
    // silent peer) could take forever.
    close: async () => {
      const closed = listener.close();
      live.dropAll();
      await closed;
    },
  };
}
