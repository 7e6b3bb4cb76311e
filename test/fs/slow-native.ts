// A file backend whose directory reads are slow by construction, for the tests that prove a walk
// gives the event loop back. Walks yield once they have held the thread for 25 ms (src/fs/walk.ts);
// a test that relies on the machine being slow enough to cross that line flakes on a fast one.
// Here every entry the backend offers costs `msPerEntry` of the walk's own clock, so a directory
// of n entries holds the thread for at least n * msPerEntry ms however fast the machine is, and
// `seen()` says how far the walk had got when some other callback ran.
import type { FsNative } from "../../platform/fs/native.ts";

export interface SlowNative {
  native: FsNative;
  /** Entries the backend has offered to walks so far. */
  seen(): number;
}

function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the cost must be on the walk's thread, as real matching work would be
  }
}

export function slowDirectoryReads(inner: FsNative, msPerEntry: number): SlowNative {
  let seen = 0;
  const readDirSmallest: FsNative["readDirSmallest"] = (dirFd, k, keep, fresh) =>
    inner.readDirSmallest(
      dirFd,
      k,
      (name) => {
        spin(msPerEntry);
        seen++;
        return keep === undefined ? true : keep(name);
      },
      fresh,
    );
  const native = new Proxy(inner, {
    get(target, prop) {
      if (prop === "readDirSmallest") return readDirSmallest;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { native, seen: () => seen };
}
