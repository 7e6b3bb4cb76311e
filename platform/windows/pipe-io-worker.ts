// The I/O thread of the Bridge's named-pipe transport (./pipe-stream.ts is the other half). It owns
// one I/O completion port and blocks on it, so the main thread never waits on a pipe. The main
// thread creates every pipe handle, associates it with the port (key = the stream's id) and hands
// it over with a control packet; from then on this thread issues the listen and the reads, and
// reports every completion back by message. Writes are the main thread's own operations: their
// completions are only forwarded.
//
// Control packets (main -> here) are PostQueuedCompletionStatus packets whose key has CONTROL_BIT
// set: the low bits are the stream id, the byte count is the opcode, the "overlapped" value its
// argument (the handle, for ADOPT_*). Real completions never carry that bit.
//
// Back-pressure: after each chunk read, the next read waits for the main thread's READ_MORE, so
// at most one 64 KiB chunk per stream is ever on its way, whatever the peer sends.
import {
  allocNative,
  CONTROL_BIT,
  freeNative,
  INFINITE,
  INVALID_HANDLE,
  nativeBytes,
  NUDGE_AFTER_MS,
  POSTED,
  SEEN,
  isNtError,
  Op,
  OVERLAPPED_BYTES,
  overlappedResult,
  pipeWin32,
  READ_CHUNK_BYTES,
  startListen,
  startRead,
  STATUS_PIPE_CONNECTED,
  type FromPipeIo,
} from "./pipe-win32.ts";
import { normalJitPolicy } from "../jit-policy.ts";

declare const self: Worker;

interface Stream {
  handle: bigint;
  /** listen OVERLAPPED at 0, read OVERLAPPED at OVERLAPPED_BYTES, then the read buffer. */
  block: number;
  /** Operations of ours (listen, read) the kernel still owns. */
  inFlight: number;
  closing: boolean;
}

// This thread runs for the Bridge's life: optimized as usual (../jit-policy.ts).
normalJitPolicy();
const k = pipeWin32();
const port = k.CreateIoCompletionPort(INVALID_HANDLE, 0n, 0n, 1);
const streams = new Map<number, Stream>();
const counters = new Int32Array(new SharedArrayBuffer(8));
const post = (message: FromPipeIo, transfer?: ArrayBuffer[]) => {
  Atomics.add(counters, POSTED, 1);
  self.postMessage(message, transfer ?? []);
};
const undelivered = () => Atomics.load(counters, SEEN) !== Atomics.load(counters, POSTED);

const listenOv = (s: Stream) => s.block;
const readOv = (s: Stream) => s.block + OVERLAPPED_BYTES;
const readBuffer = (s: Stream) => s.block + 2 * OVERLAPPED_BYTES;

function adopt(id: number, handle: bigint): Stream {
  const s: Stream = { handle, block: allocNative(2 * OVERLAPPED_BYTES + READ_CHUNK_BYTES), inFlight: 0, closing: false };
  streams.set(id, s);
  return s;
}

function listen(id: number, s: Stream): void {
  const status = startListen(s.handle, listenOv(s));
  if (status === STATUS_PIPE_CONNECTED) return connected(id, s);
  if (isNtError(status)) return post({ t: "eof", id, status });
  s.inFlight++;
}

function connected(id: number, s: Stream): void {
  post({ t: "connected", id });
  read(id, s);
}

function read(id: number, s: Stream): void {
  if (s.closing) return;
  const status = startRead(s.handle, readOv(s), readBuffer(s), READ_CHUNK_BYTES);
  if (isNtError(status)) return post({ t: "eof", id, status });
  s.inFlight++;
}

function release(id: number, s: Stream): void {
  if (s.inFlight > 0) return;
  freeNative(s.block);
  streams.delete(id);
  post({ t: "released", id });
}

function control(id: number, op: number, argument: bigint): void {
  if (op === Op.AdoptServer) return listen(id, adopt(id, argument));
  if (op === Op.AdoptClient) return read(id, adopt(id, argument));
  const s = streams.get(id);
  if (s === undefined) return;
  if (op === Op.ReadMore) return read(id, s);
  if (op === Op.Close && !s.closing) {
    s.closing = true;
    // Cancels our listen or read and any write of the main thread; each still completes (aborted)
    // through the port, so the memory they point at is freed only after that.
    k.CancelIoEx(s.handle, 0n);
    k.CloseHandle(s.handle);
    release(id, s);
  }
}

function completed(id: number, overlapped: number): void {
  const s = streams.get(id);
  const { status, bytes } = overlappedResult(overlapped);
  if (s === undefined || (overlapped !== listenOv(s) && overlapped !== readOv(s))) {
    post({ t: "written", id, overlapped, status, bytes });
    return;
  }
  s.inFlight--;
  if (s.closing) return release(id, s);
  if (isNtError(status)) return post({ t: "eof", id, status });
  if (overlapped === listenOv(s)) return connected(id, s);
  if (bytes === 0) return read(id, s);
  const chunk = nativeBytes(readBuffer(s), bytes).slice();
  post({ t: "data", id, bytes: chunk.buffer }, [chunk.buffer]);
}

const byteCount = new Uint32Array(1);
const key = new BigUint64Array(1);
const overlappedOut = new BigUint64Array(1);

/** Takes one packet, waiting up to `timeoutMs`; false when none came (or the port is gone). */
function takePacket(timeoutMs: number): boolean {
  // FALSE with an OVERLAPPED is a failed operation (its status is in the OVERLAPPED); FALSE with
  // none is a wait that timed out, or a port that is gone.
  const ok = k.GetQueuedCompletionStatus(port, byteCount as never, key as never, overlappedOut as never, timeoutMs);
  const overlapped = Number(overlappedOut[0]!);
  if (!ok && overlapped === 0) return false;
  const packetKey = key[0]!;
  if ((packetKey & CONTROL_BIT) !== 0n) control(Number(packetKey & ~CONTROL_BIT), byteCount[0]!, overlappedOut[0]!);
  else completed(Number(packetKey), overlapped);
  return true;
}

post({ t: "ready", port: port.toString(), counters: counters.buffer as SharedArrayBuffer });
for (;;) {
  const wait = undelivered() ? NUDGE_AFTER_MS : INFINITE;
  if (takePacket(wait)) while (takePacket(0));
  else if (wait === INFINITE) break;
  else if (undelivered()) self.postMessage({ t: "nudge" } satisfies FromPipeIo);
  // Back to this thread's event loop between batches, so its messages go out.
  await new Promise<void>((resolve) => setImmediate(resolve));
}
