// Windows-only behaviour (Job Objects, LockFileEx, the user SID). These skip on Linux and macOS
// because the kernel32/advapi32 calls exist only on Windows; the windows.yml workflow runs them.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { becomeSubreaper, containment, leases, pipeName } from "../../platform/index.ts";
import { currentUserSid } from "../../platform/windows/pipe.ts";
import { tempDir } from "../support/temp.ts";

const onWindows = process.platform === "win32";
const dir = tempDir("serverfs-win-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function alive(pid: number): boolean {
  const r = Bun.spawnSync(["tasklist", "/FI", `PID eq ${pid}`, "/NH", "/FO", "CSV"]);
  return r.stdout.toString().includes(`"${pid}"`);
}

describe.skipIf(!onWindows)("Windows platform (needs Windows: Job Objects, LockFileEx, SIDs)", () => {
  test("the Bridge can put itself into a kill-on-close job", () => {
    expect(becomeSubreaper()).toBe(true);
  });

  test("a provider tree runs in its job; TerminateJobObject leaves ActiveProcesses == 0", async () => {
    const runId = `win-${process.pid}-1`;
    // The provider (bun) starts a grandchild that would outlive a plain kill of the leader.
    const script = "Bun.spawn([process.execPath, '-e', 'setInterval(()=>{},1e6)']); console.log('up'); setInterval(()=>{},1e6);";
    const p = await containment().spawn({
      argv: [process.execPath, "-e", script],
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", SYSTEMROOT: process.env.SYSTEMROOT ?? "C:\\Windows" },
      runId,
    });
    const reader = p.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain("up");
    let members: number[] = [];
    for (let i = 0; i < 200 && members.length < 3; i++) {
      members = await p.members();
      await Bun.sleep(25);
    }
    // launcher + provider + grandchild
    expect(members.length).toBe(3);
    const evidence = await p.stop(0);
    expect(evidence).toMatchObject({ proved: true, survivors: [], method: "kill" });
    for (const pid of members) expect(alive(pid)).toBe(false);
    const swept = await containment().sweep([runId], 100);
    expect(swept.evidence.proved).toBe(true);
  });

  test("LockFileEx: a second handle is refused; release frees it; existing-only refuses a missing file", () => {
    const path = join(dir, "a.lock");
    const lease = leases().tryAcquire(path);
    expect(lease).not.toBeNull();
    expect(leases().tryAcquire(path)).toBeNull();
    lease!.release();
    const again = leases().tryAcquire(path);
    expect(again).not.toBeNull();
    again!.release();
    expect(() => leases().tryAcquireExisting(join(dir, "missing.lock"))).toThrow(
      expect.objectContaining({ code: "AGENT_LOCK_UNAVAILABLE" }),
    );
  });

  test("the pipe name derives from the current user's SID", () => {
    expect(currentUserSid()).toMatch(/^S-1-5-\d+(-\d+)*$/);
    expect(pipeName()).toMatch(/^\\\\\.\\pipe\\serverfs-bridge-v1-[0-9a-f]{16}$/);
  });
});
