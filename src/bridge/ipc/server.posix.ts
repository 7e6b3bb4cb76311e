// The Bridge endpoint on Linux and macOS: an AF_UNIX stream socket, born 0600 inside a 0700
// directory, and a kernel-measured peer uid check before anything is dispatched.
import fs from "node:fs";
import path from "node:path";
import { ServerfsError, errnoCode } from "../../errors.ts";
import type { PeerIdentity } from "../../../platform/types.ts";
import { socketBounds, type SocketBounds } from "./bounds.ts";
import { ConnectionSet, type Connection, type Dispatch } from "./connection.ts";
import { probeSocket } from "./probe.ts";
import { failure } from "./protocol.ts";

export interface PosixServerOptions {
  socketPath: string;
  dispatch: Dispatch;
  /** Measures the peer of an accepted socket fd (SO_PEERCRED / getpeereid). */
  peerCredentials: (fd: number) => PeerIdentity;
  /** The uid a peer must have; defaults to our own. */
  allowedUid?: number;
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Connection cap, timeouts and queue cap (defaults in bounds.ts). */
  bounds?: Partial<SocketBounds>;
}

export interface BridgeListener {
  readonly endpoint: string;
  close(): Promise<void>;
  connectionCount(): number;
}

/** Make the socket directory safe: created 0700, or an existing one we own that nobody else can write. */
export function prepareSocketDirectory(dir: string): void {
  const uid = process.getuid!();
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    if (errnoCode(err) !== "ENOENT") throw new ServerfsError("SOCKET_DIRECTORY_UNSAFE", "socket directory cannot be inspected");
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700);
    return;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new ServerfsError("SOCKET_DIRECTORY_UNSAFE", "socket directory is not a real directory");
  }
  if (st.uid !== uid) throw new ServerfsError("SOCKET_DIRECTORY_UNSAFE", "socket directory is owned by another user");
  if ((st.mode & 0o022) !== 0) {
    throw new ServerfsError("SOCKET_DIRECTORY_UNSAFE", "socket directory is group- or world-writable");
  }
  fs.chmodSync(dir, 0o700);
}

/** A Bridge that does not refuse (connects, or is too busy to answer in time) is live. */
async function probeConnect(socketPath: string, timeoutMs: number): Promise<"live" | "refused"> {
  const probe = await probeSocket(socketPath, timeoutMs);
  return probe.outcome === "error" && (probe.code === "ECONNREFUSED" || probe.code === "ENOENT") ? "refused" : "live";
}

/**
 * Existing path at the socket location: only a same-owner socket that refuses connections (and did
 * not change identity meanwhile) is a stale leftover we may unlink. Anything else is left alone.
 */
export async function clearStaleSocket(socketPath: string): Promise<void> {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(socketPath);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return;
    throw new ServerfsError("SOCKET_PATH_IN_USE", "socket path cannot be inspected");
  }
  if (!st.isSocket() || st.uid !== process.getuid!()) {
    throw new ServerfsError("SOCKET_PATH_IN_USE", "socket path is occupied by something that is not our socket");
  }
  if ((await probeConnect(socketPath, 1000)) === "live") {
    throw new ServerfsError("SOCKET_PATH_IN_USE", "another Bridge is listening on the socket path");
  }
  const again = fs.lstatSync(socketPath);
  if (again.dev !== st.dev || again.ino !== st.ino) {
    throw new ServerfsError("SOCKET_PATH_IN_USE", "socket path changed while being checked");
  }
  fs.unlinkSync(socketPath);
}

interface SocketData {
  conn: Connection;
}

export async function listenPosix(opts: PosixServerOptions): Promise<BridgeListener> {
  const log = opts.log ?? (() => {});
  const allowedUid = opts.allowedUid ?? process.getuid!();
  prepareSocketDirectory(path.dirname(opts.socketPath));
  await clearStaleSocket(opts.socketPath);
  const live = new ConnectionSet(opts.dispatch, log, socketBounds(opts.bounds));

  const previous = process.umask(0o177);
  let server: ReturnType<typeof Bun.listen<SocketData>>;
  try {
    server = Bun.listen<SocketData>({
      unix: opts.socketPath,
      socket: {
        open(socket) {
          const conn = live.open(socket);
          socket.data = { conn };
          // Refused for the connection cap: no peer check needed, nothing will be dispatched.
          if (conn.isClosing) return;
          let identity: PeerIdentity | null = null;
          try {
            const fd = (socket as unknown as { fd?: number }).fd;
            if (typeof fd === "number" && fd >= 0) identity = opts.peerCredentials(fd);
          } catch {
            identity = null;
          }
          if (!identity || identity.uid === null || identity.uid !== allowedUid) {
            log("ipc.peer_rejected", { peer_uid: identity?.uid ?? null });
            conn.rejectAndClose(failure(null, "PEER_NOT_AUTHORIZED", "peer is not authorized"));
          }
        },
        data(socket, data) {
          socket.data.conn.onData(data);
        },
        drain(socket) {
          socket.data.conn.onDrain();
        },
        close(socket) {
          socket.data?.conn.onClose();
        },
        error(socket) {
          socket.data?.conn.onClose();
        },
      },
    });
  } catch (err) {
    throw new ServerfsError("SOCKET_PATH_IN_USE", `cannot listen on the socket path (${errnoCode(err) ?? "error"})`);
  } finally {
    process.umask(previous);
  }
  const identity = fs.lstatSync(opts.socketPath);

  return {
    endpoint: opts.socketPath,
    connectionCount: () => live.size,
    async close() {
      server.stop(true);
      try {
        const st = fs.lstatSync(opts.socketPath);
        if (st.dev === identity.dev && st.ino === identity.ino) fs.unlinkSync(opts.socketPath);
      } catch {
        // already gone
      }
    },
  };
}
