// struct kevent and the EVFILT_PROC / EVFILT_USER constants the fork watcher uses (bsd/sys/event.h).
// kqueue(2) and kevent(2) are fixed-argument calls, safe to bind through bun:ffi on both arches.

export const KEVENT_SIZE = 32; // uintptr ident, int16 filter, uint16 flags, uint32 fflags, intptr data, void *udata
export const EVFILT_PROC = -5;
export const EVFILT_USER = -10;
export const EV_ADD = 0x0001;
export const EV_ONESHOT = 0x0010;
export const EV_CLEAR = 0x0020;
export const EV_RECEIPT = 0x0040;
export const EV_ERROR = 0x4000;
export const NOTE_TRIGGER = 0x01000000;
export const NOTE_EXIT = 0x80000000;
export const NOTE_FORK = 0x40000000;
export const NOTE_EXEC = 0x20000000;

export interface KEvent {
  ident: bigint;
  filter: number;
  flags: number;
  fflags: number;
  data: bigint;
}

/** Write one struct kevent at `index` of `buffer`. Pure. */
export function encodeKEvent(buffer: Uint8Array, index: number, event: KEvent): void {
  const view = new DataView(buffer.buffer, buffer.byteOffset + index * KEVENT_SIZE, KEVENT_SIZE);
  view.setBigUint64(0, event.ident, true);
  view.setInt16(8, event.filter, true);
  view.setUint16(10, event.flags, true);
  view.setUint32(12, event.fflags >>> 0, true);
  view.setBigInt64(16, event.data, true);
  view.setBigUint64(24, 0n, true);
}

/** Read the struct kevent at `index` of `buffer`. Pure. */
export function decodeKEvent(buffer: Uint8Array, index: number): KEvent {
  const view = new DataView(buffer.buffer, buffer.byteOffset + index * KEVENT_SIZE, KEVENT_SIZE);
  return {
    ident: view.getBigUint64(0, true),
    filter: view.getInt16(8, true),
    flags: view.getUint16(10, true),
    fflags: view.getUint32(12, true),
    data: view.getBigInt64(16, true),
  };
}

/** The registration that reports a process's forks, execs and exit (EV_CLEAR: each report once). */
export function watchProcess(pid: number): KEvent {
  return { ident: BigInt(pid), filter: EVFILT_PROC, flags: EV_ADD | EV_CLEAR | EV_RECEIPT, fflags: NOTE_FORK | NOTE_EXEC | NOTE_EXIT, data: 0n };
}

/** A one-shot user event that wakes the watcher thread to look at `pid`'s children now. */
export function wakeFor(pid: number): KEvent {
  return { ident: BigInt(pid), filter: EVFILT_USER, flags: EV_ADD | EV_ONESHOT | EV_RECEIPT, fflags: NOTE_TRIGGER, data: 0n };
}
