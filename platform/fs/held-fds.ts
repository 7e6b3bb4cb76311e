// What each descriptor a backend handed out names, by descriptor number (the macOS backend keeps
// its root and path here: there is no /proc/self/fd to ask). Numbers are reused as soon as a
// descriptor is closed, and most closes happen outside the backend (the file layer closes with
// close(2) directly), so a number alone proves nothing: each entry records the identity
// (st_dev, st_ino) of the object its descriptor named when it was recorded, and a lookup whose
// descriptor no longer names that object (closed, or its number reused for something else)
// drops the entry and finds nothing. Closes the backend makes itself drop the entry at once.
// Pure over `identify`: tested on Linux (test/platform/held-fds.test.ts).

export interface FileIdentity {
  dev: bigint;
  ino: bigint;
}

export class HeldDescriptors<T> {
  private readonly entries = new Map<number, { id: FileIdentity; value: T }>();

  /** `identify`: the identity of what `fd` names now, or null when `fd` is not open. */
  constructor(private readonly identify: (fd: number) => FileIdentity | null) {}

  /** Record `value` for the open descriptor `fd` (replacing whatever its number held before). */
  record(fd: number, value: T, id: FileIdentity | null = this.identify(fd)): void {
    if (id === null) {
      this.entries.delete(fd);
      return;
    }
    this.entries.set(fd, { id: { dev: id.dev, ino: id.ino }, value });
  }

  /** The value recorded for `fd`, only while `fd` still names the object it was recorded for. */
  lookup(fd: number): T | undefined {
    const entry = this.entries.get(fd);
    if (entry === undefined) return undefined;
    const now = this.identify(fd);
    if (now === null || now.dev !== entry.id.dev || now.ino !== entry.id.ino) {
      this.entries.delete(fd);
      return undefined;
    }
    return entry.value;
  }

  /** The backend closed `fd`: forget it. */
  drop(fd: number): void {
    this.entries.delete(fd);
  }

  /** How many entries are kept (a test's view of what was dropped). */
  get size(): number {
    return this.entries.size;
  }
}
