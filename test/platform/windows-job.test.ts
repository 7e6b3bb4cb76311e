// The task Job Object against a provider that tries to leave it (Windows only; the windows.yml
// workflow runs these on Windows and the Windows lane under Wine): no job name can be opened, the
// job is kill-on-close and allows no breakaway, a stop still proves a tree gone, a process that did
// leave a job is found by its parent pid and creation time (the stop is then not proved), and the
// restart sweep finds processes by their run marker.
import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join, win32 } from "node:path";
import { containment } from "../../platform/index.ts";
import { JOB_OBJECT_LIMIT_BREAKAWAY_OK, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK, JobObject } from "../../platform/windows/job.ts";
import { JobTree, stopJob } from "../../platform/windows/job-stop.ts";
import { findEscapees, liveCreationTime } from "../../platform/windows/process-scan.ts";
import { readThroughNewline } from "../support/proc.ts";
import { canOpenJobByName, descendants, exits, isWine, looseJob, onWindows, processAlive, waitable } from "./windows-helpers.ts";

// The processes here write nothing: they run in the temp directory itself, so no directory of the
// test's has to outlive them (Wine refuses to remove a directory a dying process still stands in).
const dir = tmpdir();
const provider = join(import.meta.dir, "fixtures", "job-escape-provider.ts");
const bunExe = win32.basename(process.execPath).toLowerCase();
const baseEnv = () => ({ PATH: process.env.PATH ?? "", SYSTEMROOT: process.env.SYSTEMROOT ?? "C:\\Windows" });
const ERROR_FILE_NOT_FOUND = 2;
const ERROR_ACCESS_DENIED = 5;
// Wine 8.0 answers JobObjectExtendedLimitInformation with zeros whatever the job holds (measured:
// LimitFlags 0 right after setting KILL_ON_JOB_CLOSE), so the read-back is asserted on Windows only;
// the behaviour the flags stand for (no child leaves the task job, the tree dies with the last
// handle) is asserted on both.
const limitsReadable = !isWine;
/** A survivor list as comparable rows. */
const rows = (list: Array<{ pid: number; command: string }>) =>
  list.map((s) => ({ pid: s.pid, command: s.command.toLowerCase() })).sort((a, b) => a.pid - b.pid);
/** What an independent snapshot sees under `pid` (itself included), as survivor rows. */
const treeRows = (pid: number) => rows(descendants(pid).map((r) => ({ pid: r.pid, command: r.exe })));

/** The first line a child writes (readThroughNewline reads up to it). */
const firstLine = async (stream: ReadableStream<Uint8Array>): Promise<string> => (await readThroughNewline(stream)).split("\n")[0]!;

interface ProviderReport {
  pid: number;
  opened: Array<{ name: string; opened: boolean; error: number }>;
  loosened: boolean;
  breakaway: { pid: number } | { error: number };
  plain: { pid: number } | { error: number };
}

describe.skipIf(!onWindows)("Windows task job (needs Windows: Job Objects, Toolhelp, GetProcessTimes)", () => {
  test.skipIf(!limitsReadable)("a task job (JobObject.create, as spawn makes it) is kill-on-close with no breakaway flag, read back from the kernel (Wine reads limits as zeros)", () => {
    const job = JobObject.create();
    expect(job).not.toBeNull();
    try {
      const flags = job!.limitFlags();
      expect(flags).toBe(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE);
      expect(flags! & (JOB_OBJECT_LIMIT_BREAKAWAY_OK | JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK)).toBe(0);
    } finally {
      job!.close();
    }
  });

  test("a provider cannot reach its job: no run-id name opens, no breakaway, no loosening; the stop proves its tree gone", async () => {
    const runId = `winjob-${process.pid}-1`;
    const p = await containment().spawn({ argv: [process.execPath, provider], cwd: dir, env: baseEnv(), runId });
    p.stdin.write("g");
    await p.stdin.flush();
    const report = JSON.parse(await firstLine(p.stdout)) as ProviderReport;
    // The names serverfs used to give task jobs, tried from inside the job with the provider's own run id.
    expect(report.opened).toEqual([
      { name: `Local\\serverfs-run-${runId}`, opened: false, error: ERROR_FILE_NOT_FOUND },
      { name: `Global\\serverfs-run-${runId}`, opened: false, error: ERROR_FILE_NOT_FOUND },
      { name: `serverfs-run-${runId}`, opened: false, error: ERROR_FILE_NOT_FOUND },
    ]);
    // ... and from outside it, by the Bridge's side.
    for (const name of report.opened.map((o) => o.name)) expect({ name, opened: canOpenJobByName(name) }).toEqual({ name, opened: false });
    // The only job handle a provider has is NULL ("my own job"), and no limit can be set through it.
    expect(report.loosened).toBe(false);
    expect("pid" in report.plain).toBe(true);
    const members = await p.members();
    expect(members).toContain(report.pid);
    expect(members).toContain((report.plain as { pid: number }).pid);
    // Breakaway: refused outright when the provider's own job is the task job. Bun (libuv) puts
    // every child it starts into a job of its own that allows breakaway, nested inside the task
    // job; a breakaway child then leaves only that inner job and stays in the task job.
    if ("pid" in report.breakaway) expect(members).toContain(report.breakaway.pid);
    else expect(report.breakaway).toEqual({ error: ERROR_ACCESS_DENIED });
    const tree = descendants(p.pid);
    const handles = tree.map((r) => waitable(r.pid));
    const evidence = await p.stop(0);
    expect(evidence).toMatchObject({ proved: true, survivors: [], method: "kill", proof: "job" });
    expect(handles.map(exits).every(Boolean)).toBe(true);
    expect(tree.filter((r) => processAlive(r.pid))).toEqual([]);
  });

  test("a child that left its job is found by parent pid and creation time: the stop is not proved, names it, ends it", async () => {
    const job = looseJob();
    const child = Bun.spawn([process.execPath, provider], { cwd: dir, env: baseEnv(), stdin: "pipe", stdout: "pipe", stderr: "ignore", windowsHide: true });
    try {
      expect(job.assign(child.pid)).toBe(true);
      const tree = new JobTree();
      tree.note([child.pid]);
      child.stdin.write("g");
      await child.stdin.flush();
      const report = JSON.parse(await firstLine(child.stdout)) as ProviderReport;
      expect("pid" in report.breakaway).toBe(true);
      const escaped = (report.breakaway as { pid: number }).pid;
      const plain = (report.plain as { pid: number }).pid;
      // The escapee runs outside the job with the provider as its parent; the plain child is inside.
      expect(job.pids()).toContain(child.pid);
      expect(job.pids()).toContain(plain);
      expect(job.pids()).not.toContain(escaped);
      expect(descendants(child.pid).find((r) => r.pid === escaped)).toMatchObject({ ppid: child.pid, exe: expect.stringMatching(/bun\.exe$/i) });
      // The escapee and whatever it started (Wine gives it a conhost.exe), by an independent snapshot.
      const outside = treeRows(escaped);
      expect(outside).toContainEqual({ pid: escaped, command: bunExe });
      const handles = outside.map((r) => waitable(r.pid));
      const evidence = await stopJob(job, tree, "no-marker-here", 0, () => {}, 10_000);
      expect(evidence.proved).toBe(false);
      expect(evidence.method).toBe("kill");
      expect(rows(evidence.survivors)).toEqual(outside);
      // The job itself is empty: its own count alone would have called this stop proved.
      expect(job.activeProcesses()).toBe(0);
      // The stop ended what it found.
      expect(handles.map(exits).every(Boolean)).toBe(true);
      expect(processAlive(escaped)).toBe(false);
    } finally {
      child.kill();
      await child.exited;
      job.close();
    }
  });

  test("the scan counts a child only if it was created no earlier than the member it names as parent", async () => {
    // The test process stands in for a tree member; its child is outside every task job.
    const child = Bun.spawn([process.execPath, "-e", "setInterval(() => {}, 1e6)"], { stdin: "ignore", stdout: "ignore", stderr: "ignore", windowsHide: true });
    try {
      const me = liveCreationTime(process.pid)!;
      const childCreated = liveCreationTime(child.pid)!;
      expect(childCreated >= me).toBe(true);
      const found = findEscapees([{ pid: process.pid, created: me }], () => false, []);
      expect(found?.find((p) => p.pid === child.pid)).toMatchObject({ pid: child.pid, ppid: process.pid, created: childCreated });
      // The same parent pid, but as a member created after the child: the child is not its.
      const later = findEscapees([{ pid: process.pid, created: childCreated + 1n }], () => false, []);
      expect(later?.some((p) => p.pid === child.pid)).toBe(false);
      // A child inside the job is a member, not an escapee.
      const inside = findEscapees([{ pid: process.pid, created: me }], (pid) => pid === child.pid, []);
      expect(inside?.some((p) => p.pid === child.pid)).toBe(false);
    } finally {
      child.kill();
      await child.exited;
    }
  });

  test("a stop also counts a process outside the job that carries the run marker, even when its parent is gone", async () => {
    const runId = `winjob-${process.pid}-3`;
    // Started by the test, not by the task: only the marker ties it to the task.
    const marked = Bun.spawn([process.execPath, "-e", "setInterval(() => {}, 1e6)"], {
      env: { ...baseEnv(), SERVERFS_RUN_ID: runId },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
      windowsHide: true,
    });
    const p = await containment().spawn({ argv: [process.execPath, "-e", "console.log('up'); setInterval(() => {}, 1e6)"], cwd: dir, env: baseEnv(), runId });
    try {
      expect(await firstLine(p.stdout)).toBe("up");
      const outside = treeRows(marked.pid);
      expect(outside).toContainEqual({ pid: marked.pid, command: bunExe });
      const handles = outside.map((r) => waitable(r.pid));
      const evidence = await p.stop(0);
      expect(evidence.proved).toBe(false);
      expect(rows(evidence.survivors)).toEqual(outside);
      expect(handles.map(exits).every(Boolean)).toBe(true);
    } finally {
      marked.kill();
      await marked.exited;
    }
  });

  test("the restart sweep finds a marked process and its child outside any job, ends both with proof, leaves others alone", async () => {
    const runId = `winjob-${process.pid}-4`;
    const script = "const c = Bun.spawn([process.execPath, '-e', 'setInterval(()=>{},1e6)'], { stdio: ['ignore', 'ignore', 'ignore'] }); console.log(c.pid); setInterval(() => {}, 1e6);";
    const marked = Bun.spawn([process.execPath, "-e", script], { env: { ...baseEnv(), SERVERFS_RUN_ID: runId }, stdin: "ignore", stdout: "pipe", stderr: "ignore", windowsHide: true });
    const bystander = Bun.spawn([process.execPath, "-e", "setInterval(() => {}, 1e6)"], { env: { ...baseEnv(), SERVERFS_RUN_ID: `${runId}-other` }, stdin: "ignore", stdout: "ignore", stderr: "ignore", windowsHide: true });
    try {
      const grandchild = Number(await firstLine(marked.stdout));
      // The marked process, its child and whatever else it started (Wine gives each a conhost.exe).
      const outside = treeRows(marked.pid);
      expect(outside).toContainEqual({ pid: marked.pid, command: bunExe });
      expect(outside).toContainEqual({ pid: grandchild, command: bunExe });
      const handles = outside.map((r) => waitable(r.pid));
      const swept = await containment().sweep([runId], 0);
      expect(swept.found).toBe(outside.length);
      expect(swept.evidence).toMatchObject({ proved: true, survivors: [], method: "kill", proof: "job" });
      expect(handles.map(exits).every(Boolean)).toBe(true);
      expect(processAlive(bystander.pid)).toBe(true);
      const again = await containment().sweep([runId], 0);
      expect(again).toMatchObject({ found: 0, evidence: { proved: true, method: "already-exited" } });
    } finally {
      marked.kill();
      bystander.kill();
      await Promise.all([marked.exited, bystander.exited]);
    }
  });

  test("a Bridge that dies takes its task trees with it (kill-on-close); the restart sweep then finds nothing", async () => {
    const runId = `winjob-${process.pid}-5`;
    const platform = join(import.meta.dir, "../../platform/index.ts").replaceAll("\\", "/");
    const bridge = [
      `const { containment } = require(${JSON.stringify(platform)});`,
      `const p = await containment().spawn({ argv: [process.execPath, "-e", "Bun.spawn([process.execPath, '-e', 'setInterval(()=>{},1e6)']); console.log('up'); setInterval(()=>{},1e6)"], cwd: ${JSON.stringify(dir)}, env: { PATH: process.env.PATH ?? "", SYSTEMROOT: process.env.SYSTEMROOT ?? "" }, runId: ${JSON.stringify(runId)} });`,
      "const r = p.stdout.getReader(); await r.read();",
      "let m = await p.members(); while (m.length < 3) { await Bun.sleep(10); m = await p.members(); }",
      "console.log(JSON.stringify(m)); setInterval(() => {}, 1e6);",
    ].join("\n");
    const fake = Bun.spawn([process.execPath, "-e", bridge], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe", windowsHide: true });
    const members = JSON.parse(await firstLine(fake.stdout)) as number[];
    expect(members.length).toBeGreaterThanOrEqual(3);
    const handles = members.map(waitable);
    fake.kill(); // TerminateProcess: no cleanup code of the fake Bridge runs
    await fake.exited;
    expect(handles.map(exits).every(Boolean)).toBe(true);
    const swept = await containment().sweep([runId], 0);
    expect(swept).toMatchObject({ found: 0, evidence: { proved: true, survivors: [], method: "already-exited" } });
  });
});
