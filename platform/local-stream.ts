// The Bridge endpoint's byte streams, one interface for both transports: on Windows a named pipe
// serverfs creates and opens itself (./windows/pipe-stream.ts: DACL from the first instance, no
// remote clients, the peer's pid and user), elsewhere, and for any path that is not a pipe name, a
// node:net stream (a unix socket, whose private directory and peer credentials are checked by the
// Bridge's own unix listener).
import net from "node:net";
import { platformError } from "./errors.ts";
import { IS_WINDOWS } from "./os.ts";
import type { LocalListener, LocalStream, OpenFailure } from "./types.ts";
import { isPipePath } from "./windows/pipe.ts";
import { connectPipe, listenPipe } from "./windows/pipe-stream.ts";

class NetStream implements LocalStream {
  readonly peer = null;
  closed = false;
  onData: (bytes: Uint8Array) => void = () => {};
  onDrain: () => void = () => {};
  onClose: () => void = () => {};

  constructor(private readonly socket: net.Socket) {
    socket.on("data", (b: Buffer) => this.onData(new Uint8Array(b.buffer, b.byteOffset, b.byteLength)));
    socket.on("drain", () => this.onDrain());
    socket.on("close", () => this.gone());
    socket.on("error", () => this.gone());
  }

  /** node:net buffers every write itself: report "full" past its high-water mark instead of growing it. */
  write(data: Uint8Array): number {
    if (this.closed) return data.byteLength;
    if (this.socket.writableNeedDrain) return 0;
    this.socket.write(data);
    return data.byteLength;
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
    this.gone();
  }

  private gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}

const usesPipes = (path: string): boolean => IS_WINDOWS && isPipePath(path);

/**
 * Listens on `path`. `pipeSddl` gives the pipe's DACL on Windows (never asked for a unix socket).
 * Throws SOCKET_PATH_IN_USE when the name or path is taken.
 */
export async function listenLocal(
  path: string,
  pipeSddl: () => string,
  onStream: (stream: LocalStream) => void,
  onError: (what: string) => void,
): Promise<LocalListener> {
  if (usesPipes(path)) return listenPipe(path, pipeSddl(), onStream, onError);
  const server = net.createServer((socket) => onStream(new NetStream(socket)));
  await new Promise<void>((resolve, reject) => {
    server.once("error", () => reject(platformError("SOCKET_PATH_IN_USE", "the Bridge endpoint is already in use")));
    server.listen(path, () => resolve());
  });
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Opens a client stream to `path`, or says why not. */
export async function connectLocal(path: string): Promise<LocalStream | OpenFailure> {
  if (usesPipes(path)) return connectPipe(path);
  return new Promise((resolve) => {
    const socket = net.connect({ path });
    const failed = () => resolve("absent");
    socket.once("error", failed);
    socket.once("connect", () => {
      socket.off("error", failed);
      resolve(new NetStream(socket));
    });
  });
}
