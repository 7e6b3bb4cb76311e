// The macOS backend's descriptor bookkeeping (platform/fs/held-fds.ts): a descriptor number that
// was closed and reused must not inherit the entry of the descriptor it used to be. The table
// itself is tested with identities handed in; the backend (platform/fs/resolve-darwin.ts) is run
// on Linux through test/support/darwin-calls-linux.ts. A number is reused the way it happens in
// serve: the file layer closes a descriptor with close(2), and the next open gets the same
// number (POSIX: open returns the lowest free one; lower holes are filled first, and the test
// checks it really got the number).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { HeldDescriptors, type FileIdentity } from "../../platform/fs/held-fds.ts";
import { makeDarwinNative } from "../../platform/fs/resolve-darwin.ts";
import { linuxDarwinCalls } from "../support/darwin-calls-linux.ts";
import { tempDir } from "../fs/helpers.ts";

const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return "no error";
};

describe("held descriptor table", () => {
  /** A descriptor table the test controls: number -> what it names now. */
  function table() {
    const open = new Map<number, FileIdentity>();
    let identifyCalls = 0;
    const held = new HeldDescriptors<string>((fd) => {
      identifyCalls++;
      return open.get(fd) ?? null;
    });
    return { open, held, calls: () => identifyCalls };
  }
  const A = { dev: 1n, ino: 10n };
  const B = { dev: 1n, ino: 11n };
  const B_OTHER_DEV = { dev: 2n, ino: 10n };

  test("an entry holds while its number names what it was recorded for", () => {
    const t = table();
    t.open.set(5, A);
    t.held.record(5, "a");
    expect(t.held.lookup(5)).toBe("a");
    expect(t.held.lookup(5)).toBe("a");
    expect(t.held.lookup(6)).toBeUndefined();
  });

  test("closed outside the table and reused for another object: the stale entry is not inherited, and is dropped", () => {
    for (const other of [B, B_OTHER_DEV]) {
      const t = table();
      t.open.set(5, A);
      t.held.record(5, "a");
      t.open.set(5, other); // close(5), then another open got 5
      expect(t.held.lookup(5)).toBeUndefined();
      expect(t.held.size).toBe(0);
      t.open.set(5, A); // even back on the first object, the dropped entry stays dropped
      expect(t.held.lookup(5)).toBeUndefined();
    }
  });

  test("closed and not reused: nothing is found", () => {
    const t = table();
    t.open.set(7, A);
    t.held.record(7, "a");
    t.open.delete(7);
    expect(t.held.lookup(7)).toBeUndefined();
    expect(t.held.size).toBe(0);
  });

  test("a close through the owner drops the entry without asking the OS", () => {
    const t = table();
    t.open.set(5, A);
    t.held.record(5, "a");
    const before = t.calls();
    t.held.drop(5);
    expect(t.held.size).toBe(0);
    expect(t.held.lookup(5)).toBeUndefined();
    expect(t.calls()).toBe(before); // no entry: lookup never needed the OS
  });

  test("a new record for a reused number replaces the old entry; a known identity is taken as given", () => {
    const t = table();
    t.open.set(5, A);
    t.held.record(5, "a");
    t.open.set(5, B);
    t.held.record(5, "b");
    expect(t.held.lookup(5)).toBe("b");
    const before = t.calls();
    t.open.set(8, A);
    t.held.record(8, "root", A);
    expect(t.calls()).toBe(before);
    expect(t.held.lookup(8)).toBe("root");
  });

  test("recording a descriptor that is not open records nothing", () => {
    const t = table();
    t.held.record(9, "x");
    expect(t.held.size).toBe(0);
  });
});

/** Open `target` until the kernel hands back the free number `fd`; descriptors that filled lower free numbers are closed again. */
function reuseNumber(fd: number, target: string): void {
  const fillers: number[] = [];
  try {
    for (;;) {
      const got = fs.openSync(target, "r");
      if (got === fd) return;
      fillers.push(got);
      if (got > fd) throw new Error(`descriptor ${fd} was reused by another open of this process`);
    }
  } finally {
    for (const f of fillers) fs.closeSync(f);
  }
}

/** Close `fd` as the file layer does (close(2), unseen by the backend), then reuse its number for `target`. */
function closeAndReuse(fd: number, target: string): void {
  fs.closeSync(fd);
  reuseNumber(fd, target);
}

describe.skipIf(process.platform !== "linux")("the darwin backend's held descriptors on Linux (a reused number)", () => {

  let base: string;
  beforeAll(() => {
    base = tempDir();
    fs.mkdirSync(path.join(base, "root/a"), { recursive: true });
    fs.writeFileSync(path.join(base, "root/a/f.txt"), "inside\n");
    fs.mkdirSync(path.join(base, "outside"));
    fs.writeFileSync(path.join(base, "outside/secret.txt"), "outside\n");
  });
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

  test("a directory descriptor closed by the file layer and its number reused for a directory outside the root is refused (EBADF), never walked", () => {
    const n = makeDarwinNative(linuxDarwinCalls);
    const root = n.openRoot(path.join(base, "root"));
    const a = n.openBeneath(root, ["a"], "dirBase");
    const f = n.openBeneath(a, ["f.txt"], "read");
    expect(fs.readFileSync(f, "utf8")).toBe("inside\n");
    fs.closeSync(f);
    try {
      closeAndReuse(a, path.join(base, "outside")); // `a` now names the outside directory
      expect(code(() => n.openBeneath(a, ["secret.txt"], "read"))).toBe("EBADF");
      expect(code(() => n.openBeneath(a, ["secret.txt"], "object"))).toBe("EBADF");
      expect(code(() => n.readDir(a))).toBe("EBADF");
      expect(code(() => n.statBeneath!(a, ["secret.txt"]))).toBe("EBADF");
      expect(code(() => n.lstatChild(a, "secret.txt"))).toBe("EBADF");
      expect(code(() => n.tryLockDirectory(a, base))).toBe("EBADF");
      // even when the number names the inside directory again, the dropped entry stays dropped
      closeAndReuse(a, path.join(base, "root/a"));
      expect(code(() => n.readDir(a))).toBe("EBADF");
      // the root itself still serves
      expect(n.readDir(root).map((e) => e.name)).toEqual(["a"]);
    } finally {
      fs.closeSync(a);
      fs.closeSync(root);
    }
  });

  test("an object descriptor's number reused for an outside file: reopenForRead refuses it instead of reopening the old path", () => {
    const n = makeDarwinNative(linuxDarwinCalls);
    const root = n.openRoot(path.join(base, "root"));
    const obj = n.openBeneath(root, ["a", "f.txt"], "object");
    try {
      closeAndReuse(obj, path.join(base, "outside/secret.txt"));
      expect(code(() => n.reopenForRead(obj))).toBe("EBADF");
    } finally {
      fs.closeSync(obj);
      fs.closeSync(root);
    }
  });

  test("closeFast (the backend's own close) forgets the descriptor: its number is refused until the backend hands it out again", () => {
    const n = makeDarwinNative(linuxDarwinCalls);
    const root = n.openRoot(path.join(base, "root"));
    const a = n.openBeneath(root, ["a"], "dirList");
    try {
      n.closeFast(a);
      reuseNumber(a, path.join(base, "root/a")); // the same directory at the same number, not handed out by the backend
      expect(code(() => n.readDir(a))).toBe("EBADF");
      fs.closeSync(a);
      const b = n.openBeneath(root, ["a"], "dirList");
      expect(n.readDir(b).map((e) => e.name)).toEqual(["f.txt"]);
      n.closeFast(b);
    } finally {
      fs.closeSync(root);
    }
  });
});
