import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { leases } from "../../platform/index.ts";
import { isLinux, isLive, readThroughNewline, waitUntil } from "../support/proc.ts";
import { tempDir } from "../support/temp.ts";

const fixture = join(import.meta.dir, "fixtures", "lease-holder.ts");
const dir = tempDir("serverfs-lease-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tryFromOtherProcess(path: string): Promise<string> {
  const p = Bun.spawn([process.execPath, fixture, path, "try"], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return out.trim();
}

async function startHolder(path: string, mode: "hold" | "hold-with-child") {
  const p = Bun.spawn([process.execPath, fixture, path, mode], { stdout: "pipe", stderr: "inherit" });
  return { proc: p, line: (await readThroughNewline(p.stdout)).trim() };
}

describe.skipIf(process.platform === "win32")("flock leases (POSIX)", () => {
  test("holder refuses a second process and a second fd in the same process; release frees it", async () => {
    const path = join(dir, "a.lock");
    const lease = leases().tryAcquire(path);
    expect(lease).not.toBeNull();
    expect(leases().tryAcquire(path)).toBeNull();
    expect(await tryFromOtherProcess(path)).toBe("busy");
    lease!.release();
    lease!.release(); // idempotent
    expect(await tryFromOtherProcess(path)).toBe("acquired");
    const again = leases().tryAcquire(path);
    expect(again).not.toBeNull();
    again!.release();
  });

  test("a SIGKILLed holder's lease is released by the kernel", async () => {
    const path = join(dir, "crash.lock");
    const { proc, line } = await startHolder(path, "hold");
    expect(line).toBe("held");
    expect(leases().tryAcquire(path)).toBeNull();
    proc.kill("SIGKILL");
    await proc.exited;
    const lease = leases().tryAcquire(path);
    expect(lease).not.toBeNull();
    lease!.release();
  });

  test.skipIf(!isLinux)("the lock fd is not inherited: a child of the holder keeps nothing open and cannot keep the lease alive", async () => {
    const path = join(dir, "inherit.lock");
    const { proc, line } = await startHolder(path, "hold-with-child");
    const childPid = Number(line.split(" ")[1]);
    expect(isLive(childPid)).toBe(true);
    // The holder itself has the lock file open...
    const holderFds = readdirSync(`/proc/${proc.pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${proc.pid}/fd/${fd}`);
      } catch {
        return "";
      }
    });
    expect(holderFds).toContain(path);
    // ...and opened it close-on-exec (O_CLOEXEC = 02000000 octal in fdinfo flags).
    const lockFd = readdirSync(`/proc/${proc.pid}/fd`).find((fd) => {
      try {
        return readlinkSync(`/proc/${proc.pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    })!;
    const flags = /flags:\s*(\d+)/.exec(readFileSync(`/proc/${proc.pid}/fdinfo/${lockFd}`, "utf8"))![1]!;
    expect(Number.parseInt(flags, 8) & 0o2000000).not.toBe(0);
    // The child has no handle on it.
    const childFds = readdirSync(`/proc/${childPid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${childPid}/fd/${fd}`);
      } catch {
        return "";
      }
    });
    expect(childFds).not.toContain(path);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(isLive(childPid)).toBe(true);
    expect(await tryFromOtherProcess(path)).toBe("acquired");
    process.kill(childPid, "SIGKILL");
    await waitUntil(() => !isLive(childPid), 2000);
  });

  test("unsafe lock paths are refused with LOCK_PATH_UNSAFE; missing existing-only file is AGENT_LOCK_UNAVAILABLE", () => {
    const target = join(dir, "target.lock");
    writeFileSync(target, "");
    const link = join(dir, "link.lock");
    symlinkSync(target, link);
    expect(() => leases().tryAcquire(link)).toThrow(expect.objectContaining({ code: "LOCK_PATH_UNSAFE" }));
    const sub = join(dir, "adir");
    mkdirSync(sub);
    expect(() => leases().tryAcquire(sub)).toThrow(expect.objectContaining({ code: "LOCK_PATH_UNSAFE" }));
    if (process.platform !== "win32") {
      const fifo = join(dir, "fifo.lock");
      expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
      // O_NONBLOCK keeps this from hanging; the FIFO is refused, not waited on.
      expect(() => leases().tryAcquire(fifo)).toThrow(expect.objectContaining({ code: "LOCK_PATH_UNSAFE" }));
    }
    expect(() => leases().tryAcquireExisting(join(dir, "missing.lock"))).toThrow(
      expect.objectContaining({ code: "AGENT_LOCK_UNAVAILABLE" }),
    );
    expect(readdirSync(dir)).not.toContain("missing.lock");
    const existing = leases().tryAcquireExisting(target);
    expect(existing).not.toBeNull();
    existing!.release();
    // The error never names the host path.
    try {
      leases().tryAcquire(link);
    } catch (err) {
      expect(String((err as Error).message)).not.toContain(dir);
    }
  });
});
