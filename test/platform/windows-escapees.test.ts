// The rule the Windows stop proof uses to find processes that left a task's job (pure, every OS):
// a live process outside the job counts if its parent pid names a tree member and it was created
// no earlier than that member, and no later than its exit or a process that took its pid over.
import { describe, expect, test } from "bun:test";
import { escapees, type LiveProcess } from "../../platform/windows/process-scan.ts";

const proc = (pid: number, ppid: number, created: number, exe = "x.exe"): LiveProcess => ({ pid, ppid, created: BigInt(created), exe });
const pids = (rows: LiveProcess[]) => rows.map((p) => p.pid).sort((a, b) => a - b);
const none = () => false;

describe("escapees", () => {
  test("a child of a member and that child's own descendants count; members and unrelated processes do not", () => {
    const live = [proc(10, 1, 100), proc(20, 10, 110), proc(30, 20, 120), proc(31, 30, 130), proc(40, 1, 90), proc(41, 40, 140)];
    expect(pids(escapees([{ pid: 10, created: 100n }], live, none))).toEqual([20, 30, 31]);
  });

  test("a child created in its parent's clock tick (equal times) counts; one created before the parent does not", () => {
    const live = [proc(10, 1, 100), proc(20, 10, 100), proc(21, 10, 99)];
    expect(pids(escapees([{ pid: 10, created: 100n }], live, none))).toEqual([20]);
  });

  test("a member that died vouches for its children until its pid goes to a younger process", () => {
    // Member 10 (created 100) exited; pid 10 now belongs to an unrelated process created at 200.
    const live = [proc(10, 1, 200), proc(20, 10, 150), proc(21, 10, 250)];
    expect(pids(escapees([{ pid: 10, created: 100n }], live, none))).toEqual([20]);
    // The same pid seen as two members over the tree's life: both windows count.
    expect(pids(escapees([{ pid: 10, created: 100n }, { pid: 10, created: 200n }], live, none))).toEqual([20, 21]);
  });

  test("a member's exit time bounds its children: nothing it could not have started counts", () => {
    // Member 10 ran from 100 to 150; pid 10 is free now (no live holder). Its child from 120 counts,
    // one from 150 (its exit tick) too; a process from 160 naming pid 10 had another parent.
    const live = [proc(20, 10, 120), proc(21, 10, 150), proc(22, 10, 160)];
    expect(pids(escapees([{ pid: 10, created: 100n, exited: 150n }], live, none))).toEqual([20, 21]);
    // A younger holder of the pid bounds it too, whichever comes first.
    const reused = [proc(10, 1, 130), proc(20, 10, 120), proc(21, 10, 140)];
    expect(pids(escapees([{ pid: 10, created: 100n, exited: 150n }], reused, none))).toEqual([20]);
  });

  test("processes the job still holds are members, not escapees, and neither are their children through them", () => {
    const live = [proc(10, 1, 100), proc(20, 10, 110), proc(30, 20, 120)];
    expect(pids(escapees([{ pid: 10, created: 100n }], live, (pid) => pid === 20))).toEqual([]);
  });

  test("a marked process counts whoever its parent was, and so do its descendants", () => {
    const live = [proc(50, 999, 10), proc(51, 50, 20), proc(52, 51, 30), proc(60, 1, 5)];
    expect(pids(escapees([], live, none, (p) => p.pid === 50))).toEqual([50, 51, 52]);
    // A marked process inside the job is a member.
    expect(pids(escapees([], live, (pid) => pid === 50, (p) => p.pid === 50))).toEqual([]);
  });

  test("a process that is its own parent (pid 0) never makes the walk loop", () => {
    const live = [proc(0, 0, 0), proc(4, 0, 1)];
    expect(pids(escapees([{ pid: 0, created: 0n }], live, none))).toEqual([4]);
  });
});
