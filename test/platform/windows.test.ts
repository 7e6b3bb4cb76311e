// Windows-only behaviour (Job Objects, LockFileEx, the user SID). These skip on Linux and macOS
// because the kernel32/advapi32 calls exist only on Windows; the windows.yml workflow runs them on
// Windows and the Windows lane (scripts/windows-lane/run.sh) under Wine.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { becomeSubreaper, containment, leases } from "../../platform/index.ts";
import { currentUserSid } from "../../platform/windows/pipe.ts";
import { descendants, onWindows, processAlive, processTable, removeTree } from "./windows-helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "serverfs-win-"));
afterAll(() => removeTree(dir));

describe.skipIf(!onWindows)("Windows platform (needs Windows: Job Objects, LockFileEx, SIDs)", () => {
  test("the Bridge can put itself into a kill-on-close job", () => {
    expect(becomeSubreaper()).toBe(true);
  });

  test("a provider tree runs in its job; TerminateJobObject leaves no live process, checked outside the job", async () => {
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
    const bun = (rows: { exe: string }[]) => rows.filter((r) => r.exe.toLowerCase() === "bun.exe" || r.exe.toLowerCase().startsWith("serverfs"));
    let tree = descendants(p.pid);
    for (let i = 0; i < 200 && bun(tree).length < 3; i++) {
      await Bun.sleep(25);
      tree = descendants(p.pid);
    }
    // launcher + provider + grandchild (plus the console hosts Windows starts for them)
    expect(bun(tree).length).toBe(3);
    // The job holds exactly the launcher's tree, as an independent snapshot sees it.
    expect((await p.members()).sort()).toEqual(tree.map((r) => r.pid).sort());
    const evidence = await p.stop(0);
    expect(evidence).toMatchObject({ proved: true, survivors: [], method: "kill" });
    const after = processTable();
    expect(tree.filter((r) => after.some((a) => a.pid === r.pid && a.ppid === r.ppid && a.exe === r.exe && a.threads > 0))).toEqual([]);
    expect(tree.filter((r) => processAlive(r.pid))).toEqual([]);
    const swept = await containment().sweep([runId], 100);
    expect(swept.evidence.proved).toBe(true);
    expect(swept.found).toBe(0);
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

  test("LockFileEx: another process's lease is refused here, and freed when that holder exits", async () => {
    const path = join(dir, "b.lock");
    const platform = resolve(import.meta.dir, "../../platform/index.ts").replaceAll("\\", "/");
    const holder = Bun.spawn(
      [process.execPath, "-e", `const l = require(${JSON.stringify(platform)}).leases().tryAcquire(${JSON.stringify(path)}); console.log(l ? "held" : "refused"); setInterval(() => {}, 1e6);`],
      { stdin: "ignore", stdout: "pipe", stderr: "ignore", windowsHide: true },
    );
    const reader = holder.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value).trim()).toBe("held");
    expect(leases().tryAcquire(path)).toBeNull();
    holder.kill();
    await holder.exited;
    const mine = leases().tryAcquire(path);
    expect(mine).not.toBeNull();
    mine!.release();
  });

  test("the current user's SID is read from the process token", () => {
    expect(currentUserSid()).toMatch(/^S-1-5-\d+(-\d+)*$/);
  });
});
