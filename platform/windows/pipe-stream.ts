// The Bridge's own named-pipe transport, main-thread half. node:net cannot give the pipe a
// security descriptor at creation, cannot reject remote clients and exposes no handle to ask who
// the peer is, so serverfs creates and opens its pipes itself:
//
// - server instances by CreateNamedPipeW with a SECURITY_ATTRIBUTES holding the caller's DACL
//   from the first instance on (FILE_FLAG_FIRST_PIPE_INSTANCE: a name someone else holds fails),
//   with PIPE_REJECT_REMOTE_CLIENTS, and the peer's pid read with GetNamedPipeClientProcessId;
// - the client end by NtCreateFile with SecurityIdentification (./pipe-win32.ts), and the server's
//   pid read with GetNamedPipeServerProcessId.
//
// All pipe I/O is overlapped and completes on one I/O thread per process (./pipe-io-worker.ts),
// which blocks on a completion port; this side issues the writes and sees everything as messages.
// The thread is ref'd only while a stream or a listener is open, so it never keeps a process alive.
import { ptr } from "bun:ffi";
import { workerScriptUrl } from "../embedded-worker.ts";
import { platformError } from "../errors.ts";
import { wide } from "./kernel32.ts";
import { currentUserSid, isPipePath, pipeNameHeld, PIPE_PREFIX, processUserSid } from "./pipe.ts";
import {
  allocNative,
  CONTROL_BIT,
  FILE_FLAG_FIRST_PIPE_INSTANCE,
  FILE_FLAG_OVERLAPPED,
  freeNative,
  INVALID_HANDLE,
  isNtError,
  nativeBytes,
  Op,
  openPipeClient,
  OVERLAPPED_BYTES,
  PIPE_ACCESS_DUPLEX,
  PIPE_REJECT_REMOTE_CLIENTS,
  PIPE_TYPE_BYTE,
  PIPE_UNLIMITED_INSTANCES,
  pipeWin32,
  READ_CHUNK_BYTES,
  SEEN,
  startWrite,
  STATUS_OBJECT_NAME_NOT_FOUND,
  STATUS_INSTANCE_NOT_AVAILABLE,
  STATUS_PIPE_BUSY,
  STATUS_PIPE_NOT_AVAILABLE,
  WRITE_CHUNK_BYTES,
  type FromPipeIo,
} from "./pipe-win32.ts";
import { sddlDescriptor } from "./security-descriptor.ts";
import type { LocalListener, LocalStream, OpenFailure, StreamPeer } from "../types.ts";


class NativeStream implements LocalStream {
  peer: StreamPeer | null = null;
  onData: (bytes: Uint8Array) => void = () => {};
  onDrain: () => void = () => {};
  onClose: () => void = () => {};
  closed = false;
  /** Our write OVERLAPPED, then the bytes it writes. */
  private readonly writeBlock = allocNative(OVERLAPPED_BYTES + WRITE_CHUNK_BYTES);
  private writing = false;
  private ending = false;
  private isReleased = false;
  private markReleased!: () => void;
  /** Settles once the I/O thread has closed the handle. */
  readonly released = new Promise<void>((resolve) => (this.markReleased = resolve));
  /** Server instances: called when a client connects (the listener wires it up). */
  onConnected: (() => void) | null = null;

  constructor(
    readonly id: number,
    readonly handle: bigint,
  ) {}

  write(data: Uint8Array): number {
    if (this.closed || this.ending) return data.byteLength;
    if (this.writing) return 0;
    const n = Math.min(data.byteLength, WRITE_CHUNK_BYTES);
    if (n === 0) return 0;
    nativeBytes(this.writeBlock + OVERLAPPED_BYTES, n).set(data.subarray(0, n));
    const status = startWrite(this.handle, this.writeBlock, this.writeBlock + OVERLAPPED_BYTES, n);
    if (isNtError(status)) {
      // The peer is gone; the bytes count as taken, the stream closes instead.
      queueMicrotask(() => this.destroy());
      return n;
    }
    this.writing = true;
    return n;
  }

  end(): void {
    if (this.writing) this.ending = true;
    else this.destroy();
  }

  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    hub().post(this.id, Op.Close);
    this.onClose();
  }

  /** From the I/O thread. */
  written(status: number): void {
    this.writing = false;
    if (this.closed) return this.freeIfDone();
    if (isNtError(status) || this.ending) return this.destroy();
    this.onDrain();
  }

  /** The I/O thread has closed the handle and holds none of its memory any more. */
  release(): void {
    this.isReleased = true;
    this.markReleased();
    this.freeIfDone();
  }

  private freeIfDone(): void {
    // Our write, if one was on its way, still completes (cancelled) into writeBlock.
    if (!this.isReleased || this.writing) return;
    freeNative(this.writeBlock);
    hub().forget(this.id);
  }
}

/** The process's one I/O thread and the streams it serves. */
class PipeIo {
  private readonly worker = new Worker(workerScriptUrl("platform/windows/pipe-io-worker.ts"), { smol: true });
  private port = 0n;
  private counters: Int32Array | null = null;
  readonly ready: Promise<void>;
  private readonly streams = new Map<number, NativeStream>();
  private nextId = 1;
  private users = 0;

  constructor() {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A thread that cannot start (its script missing from a broken build) fails every pipe call
    // with a coded error instead of leaving it waiting.
    this.worker.onerror = () => {
      this.worker.unref();
      reject(platformError("IO_ERROR", "the Bridge pipe's I/O thread could not start"));
    };
    this.worker.onmessage = (event: MessageEvent<FromPipeIo>) => {
      const m = event.data;
      if (m.t === "nudge") return;
      if (this.counters !== null) Atomics.add(this.counters, SEEN, 1);
      if (m.t === "ready") {
        this.port = BigInt(m.port);
        this.counters = new Int32Array(m.counters);
        Atomics.add(this.counters, SEEN, 1);
        this.worker.unref();
        return resolve();
      }
      const stream = this.streams.get(m.id);
      if (stream === undefined) return;
      if (m.t === "connected") return stream.onConnected?.();
      if (m.t === "data") {
        if (!stream.closed) stream.onData(new Uint8Array(m.bytes));
        if (!stream.closed) this.post(m.id, Op.ReadMore);
        return;
      }
      if (m.t === "eof") return stream.destroy();
      if (m.t === "written") return stream.written(m.status);
      if (m.t === "released") return stream.release();
    };
  }

  /** A handle becomes a stream: it is bound to the port (key = its id) and handed to the I/O thread. */
  adopt(handle: bigint, as: Op.AdoptServer | Op.AdoptClient): NativeStream {
    const id = this.nextId++;
    if (pipeWin32().CreateIoCompletionPort(handle, this.port, BigInt(id), 0) === 0n) {
      pipeWin32().CloseHandle(handle);
      throw platformError("IO_ERROR", "cannot bind the Bridge pipe to its I/O thread");
    }
    const stream = new NativeStream(id, handle);
    this.streams.set(id, stream);
    if (this.users++ === 0) this.worker.ref();
    this.post(id, as, handle);
    return stream;
  }

  post(id: number, op: Op, argument = 0n): void {
    pipeWin32().PostQueuedCompletionStatus(this.port, op, CONTROL_BIT | BigInt(id), argument);
  }

  forget(id: number): void {
    if (!this.streams.delete(id)) return;
    if (--this.users === 0) this.worker.unref();
  }
}

let ownSid: string | null = null;

/** The peer by pid: the peer is connected and waiting on us, so its pid still names it. */
function peerOf(pid: number | null): StreamPeer {
  if (pid === null || pid === 0) return { pid, sameUser: false };
  ownSid ??= currentUserSid();
  return { pid, sameUser: processUserSid(pid) === ownSid };
}

let io: PipeIo | null = null;
const hub = (): PipeIo => (io ??= new PipeIo());

/**
 * Serves `pipePath` with a protected DACL given as SDDL, from its first instance on, and never to
 * a remote client. Each connected client is handed over with its pid; one instance always waits
 * for the next client, so the name is never free while the listener is open. Throws
 * SOCKET_PATH_IN_USE when someone else holds the name.
 */
export async function listenPipe(
  pipePath: string,
  sddl: string,
  onConnection: (stream: LocalStream) => void,
  onError: (what: string) => void,
): Promise<LocalListener> {
  const io = hub();
  await io.ready;
  // Someone holds the name: do not add our instances to theirs. FILE_FLAG_FIRST_PIPE_INSTANCE
  // refuses it on Windows; under Wine 8 a listen on a held name succeeds (measured), so this check
  // is what refuses it there.
  if (pipeNameHeld(pipePath)) throw platformError("SOCKET_PATH_IN_USE", "another process already holds the Bridge pipe name");
  const descriptor = sddlDescriptor(sddl);
  if (descriptor === null) throw platformError("SOCKET_DIRECTORY_UNSAFE", "the Bridge pipe could not be restricted to the current user");
  // SECURITY_ATTRIBUTES { DWORD nLength; LPVOID lpSecurityDescriptor; BOOL bInheritHandle }
  const attributes = new Uint8Array(24);
  const view = new DataView(attributes.buffer);
  view.setUint32(0, 24, true);
  view.setBigUint64(8, descriptor.address, true);
  const name = wide(pipePath);
  let open = true;
  let waiting: NativeStream | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;

  const instance = (first: boolean): bigint | null => {
    const mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0);
    const handle = pipeWin32().CreateNamedPipeW(
      ptr(name),
      mode,
      PIPE_TYPE_BYTE | PIPE_REJECT_REMOTE_CLIENTS,
      PIPE_UNLIMITED_INSTANCES,
      WRITE_CHUNK_BYTES,
      READ_CHUNK_BYTES,
      0,
      ptr(attributes),
    );
    return handle === INVALID_HANDLE || handle === 0n ? null : handle;
  };

  const wait = (handle: bigint): void => {
    const stream = io.adopt(handle, Op.AdoptServer);
    waiting = stream;
    stream.onConnected = () => {
      waiting = null;
      next();
      const pid = new Uint32Array(1);
      stream.peer = peerOf(pipeWin32().GetNamedPipeClientProcessId(stream.handle, ptr(pid)) !== 0 ? pid[0]! : null);
      onConnection(stream);
    };
    // The waiting instance failed (not closed by us): put another in its place.
    stream.onClose = () => {
      if (waiting === stream) {
        waiting = null;
        next();
      }
    };
  };

  const next = (): void => {
    if (!open || waiting !== null || retry !== null) return;
    const handle = instance(false);
    if (handle !== null) return wait(handle);
    // Out of resources for a moment: the connected instances keep the name ours meanwhile.
    onError("cannot create the next pipe instance");
    retry = setTimeout(() => {
      retry = null;
      next();
    }, 100);
  };

  const first = instance(true);
  if (first === null) {
    descriptor.free();
    if (pipeNameHeld(pipePath)) throw platformError("SOCKET_PATH_IN_USE", "another process already holds the Bridge pipe name");
    throw platformError("IO_ERROR", "the Bridge pipe cannot be created");
  }
  wait(first);
  return {
    close: async () => {
      open = false;
      if (retry !== null) clearTimeout(retry);
      const w = waiting as NativeStream | null;
      waiting = null;
      w?.destroy();
      // The name is free once the I/O thread has closed the waiting instance, not before.
      if (w !== null) await w.released;
      descriptor.free();
    },
  };
}

/**
 * Opens the client end of `pipePath` and reads the server's pid. Every instance busy is "busy"
 * (the server adds one as soon as it takes a client: try again); no such pipe is "absent";
 * anything else, access denied included, is "refused".
 */
export async function connectPipe(pipePath: string): Promise<LocalStream | OpenFailure> {
  if (!isPipePath(pipePath)) return "refused";
  const io = hub();
  await io.ready;
  const opened = openPipeClient(`\\??\\pipe\\${pipePath.slice(PIPE_PREFIX.length)}`);
  if ("status" in opened) {
    if (opened.status === STATUS_OBJECT_NAME_NOT_FOUND) return "absent";
    if (opened.status === STATUS_PIPE_NOT_AVAILABLE || opened.status === STATUS_PIPE_BUSY || opened.status === STATUS_INSTANCE_NOT_AVAILABLE) return "busy";
    return "refused";
  }
  const stream = io.adopt(opened.handle, Op.AdoptClient);
  const pid = new Uint32Array(1);
  stream.peer = peerOf(pipeWin32().GetNamedPipeServerProcessId(stream.handle, ptr(pid)) !== 0 ? pid[0]! : null);
  return stream;
}
