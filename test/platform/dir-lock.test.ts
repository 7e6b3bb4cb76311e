// The writers' directory lock primitive (FsNative.tryLockDirectory: flock on the directory's own
// descriptor on Linux and macOS, LockFileEx on a lock file outside the directory on Windows),
// through the real backend of this OS: a second descriptor or process is refused while it is
// held, a rename inside the directory does not drop it, a SIGKILLed holder's lock is freed by the
// kernel, distinct directories do not share it, and nothing appears inside the directory.
// Runs on every OS (the Windows lane runs it under Wine); on Linux the macOS backend's logic over
// Linux calls (test/support/darwin-calls-linux.ts) is held to the same cases.
import { afterAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { fsNative, type FsNative } from "../../platform/fs/native.ts";
import { removeTree } from "../../platform/fs/remove-tree.ts";
import { makeDarwinNative } from "../../platform/fs/resolve-darwin.ts";
import { linuxDarwinCalls } from "../support/darwin-calls-linux.ts";
import { isLinux, readThroughNewline } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";

const fixture = path.join(import.meta.dir, "fixtures", "dir-lock-holder.ts");
const base = tempDir("serverfs-dirlock-");
const lockFiles = path.join(base, "state", "locks", "dirs");
const opened: number[] = [];
afterAll(() => {
  for (const fd of opened) fs.closeSync(fd);
  removeTree(base); // Wine-safe: a recursive rmSync fails there (EFAULT)
});

function directory(native: FsNative, name: string): { dir: string; fd: number } {
  const dir = path.join(base, name);
  fs.mkdirSync(dir, { recursive: true });
  const fd = native.openRoot(dir);
  opened.push(fd);
  return { dir, fd };
}

async function fromOtherProcess(dir: string): Promise<string> {
  const p = Bun.spawn([process.execPath, fixture, dir, lockFiles, "try"], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out.trim();
}

const backends: [string, () => FsNative][] = [["this OS's backend", fsNative]];
if (isLinux) backends.push(["the macOS backend's logic on Linux", () => makeDarwinNative(linuxDarwinCalls)]);

describe.each(backends)("the writers' directory lock: %s", (label, backend) => {
  const native = backend();
  const sub = label.startsWith("this") ? "os" : "darwin";
  test("a second descriptor and a second process are refused while it is held; release frees it", async () => {
    const { dir, fd } = directory(native, `${sub}/one`);
    const other = native.openRoot(dir);
    opened.push(other);
    const lock = native.tryLockDirectory(fd, lockFiles);
    expect(lock).not.toBeNull();
    expect(native.tryLockDirectory(fd, lockFiles)).toBeNull();
    expect(native.tryLockDirectory(other, lockFiles)).toBeNull();
    expect(await fromOtherProcess(dir)).toBe("busy");
    lock!.release();
    lock!.release(); // idempotent
    expect(await fromOtherProcess(dir)).toBe("acquired");
    const again = native.tryLockDirectory(other, lockFiles);
    expect(again).not.toBeNull();
    again!.release();
  });

  test("a rename that replaces a file inside the directory leaves the lock held", () => {
    const { dir, fd } = directory(native, `${sub}/renames`);
    fs.writeFileSync(path.join(dir, "f.txt"), "old");
    const lock = native.tryLockDirectory(fd, lockFiles);
    expect(lock).not.toBeNull();
    fs.writeFileSync(path.join(dir, "tmp"), "new");
    fs.renameSync(path.join(dir, "tmp"), path.join(dir, "f.txt"));
    expect(native.tryLockDirectory(fd, lockFiles)).toBeNull();
    lock!.release();
    expect(fs.readFileSync(path.join(dir, "f.txt"), "utf8")).toBe("new");
  });

  test("distinct directories have distinct locks, and none puts anything inside the directory", () => {
    const a = directory(native, `${sub}/a`);
    const b = directory(native, `${sub}/b`);
    const la = native.tryLockDirectory(a.fd, lockFiles);
    const lb = native.tryLockDirectory(b.fd, lockFiles);
    expect(la).not.toBeNull();
    expect(lb).not.toBeNull();
    expect(fs.readdirSync(a.dir)).toEqual([]);
    expect(fs.readdirSync(b.dir)).toEqual([]);
    la!.release();
    lb!.release();
  });

  test("a SIGKILLed holder's lock is released by the kernel", async () => {
    const { dir, fd } = directory(native, `${sub}/crash`);
    const holder = Bun.spawn([process.execPath, fixture, dir, lockFiles, "hold"], { stdout: "pipe", stderr: "inherit" });
    expect((await readThroughNewline(holder.stdout)).trim()).toBe("held");
    expect(native.tryLockDirectory(fd, lockFiles)).toBeNull();
    holder.kill("SIGKILL");
    await holder.exited;
    const lock = native.tryLockDirectory(fd, lockFiles);
    expect(lock).not.toBeNull();
    lock!.release();
  });

  test.skipIf(process.platform === "win32")("POSIX: no lock file anywhere, the lock is the directory's own descriptor", () => {
    const { fd } = directory(native, `${sub}/posix`);
    const lock = native.tryLockDirectory(fd, lockFiles);
    expect(lock).not.toBeNull();
    lock!.release();
    expect(fs.existsSync(path.join(base, "state"))).toBe(false);
  });

  test.skipIf(process.platform !== "win32")("Windows: the lock file lives in the lock-files directory, named by the directory's identity", () => {
    const { fd } = directory(native, `${sub}/windows`);
    const lock = native.tryLockDirectory(fd, lockFiles);
    expect(lock).not.toBeNull();
    const st = fs.fstatSync(fd, { bigint: true });
    expect(fs.readdirSync(lockFiles)).toContain(`${st.dev.toString(16)}-${st.ino.toString(16)}.lock`);
    lock!.release();
  });
});
