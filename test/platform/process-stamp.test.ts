// Process stamps (platform/fs/process-stamp.ts): the judging rule against a scripted process
// table (any OS), and this OS's real table against real processes, with the start time read
// independently from /proc where there is one.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import path from "node:path";
import { ownerState, ownerStateIn, ownStamp, ownStampIn, type ProcessStamp, type ProcessTable } from "../../platform/fs/process-stamp.ts";
import { BUN, procFacts } from "../support/proc.ts";

// real processes and mounts on a shared 2-core machine: a ceiling, not a timing assertion
setDefaultTimeout(60_000);

function table(starts: Record<number, string | null | undefined>, own = "100", space = "space A"): ProcessTable {
  return {
    start: (pid) => {
      if (pid === 666) throw new Error("unreadable");
      return pid in starts ? starts[pid] : null;
    },
    ownStart: () => own,
    pidSpace: () => space,
  };
}

describe("the judging rule (scripted tables)", () => {
  const t = table({ 10: "500", 11: undefined });
  const self = ownStampIn(t)!;

  test("a stamp is this process's pid, its start time and a short hash of its pid space", () => {
    expect(self.pid).toBe(process.pid);
    expect(self.start).toBe("100");
    expect(self.space).toMatch(/^[0-9a-f]{8}$/);
    expect(ownStampIn(table({}, "100", "space B"))!.space).not.toBe(self.space);
    expect(ownStampIn(table({}, "10-0"))).toBeNull(); // a start time that could not be parsed back from a name
    expect(ownStampIn({ ...t, ownStart: () => undefined })).toBeNull();
    expect(ownStampIn({ ...t, pidSpace: () => undefined })).toBeNull();
    expect(ownStampIn(null)).toBeNull();
  });

  test("gone only for a definite answer in the same pid space", () => {
    const at = (pid: number, start: string, space = self.space) => ownerStateIn(t, self, { pid, start, space });
    expect(at(10, "500")).toBe("alive");
    expect(at(10, "501")).toBe("gone"); // the pid was reused
    expect(at(12, "500")).toBe("gone"); // no such process
    expect(at(11, "500")).toBe("unknown"); // the table cannot tell
    expect(at(666, "500")).toBe("unknown"); // the table failed
    expect(at(12, "500", "00000000")).toBe("unknown"); // another pid space
    expect(at(process.pid, "100")).toBe("alive"); // this very process
    expect(ownerStateIn(null, self, { pid: 12, start: "1", space: self.space })).toBe("unknown");
    expect(ownerStateIn(t, null, { pid: 12, start: "1", space: self.space })).toBe("unknown");
  });
});

const STAMP_MODULE = path.resolve(import.meta.dir, "../../platform/fs/process-stamp.ts");
const hasTable = process.platform === "linux" || process.platform === "darwin" || process.platform === "win32";
const children: { kill(sig?: number): void }[] = [];
afterAll(() => {
  for (const c of children) c.kill(9);
});

/** A child that prints its own stamp (computed by the product, in that process) and then waits. */
async function stampedChild(): Promise<{ stamp: ProcessStamp; stop: () => Promise<void> }> {
  const code = `const { ownStamp } = await import(${JSON.stringify(STAMP_MODULE)}); console.log(JSON.stringify(ownStamp())); await new Promise(() => {});`;
  const child = Bun.spawn([BUN, "-e", code], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  children.push(child);
  const { value } = await child.stdout.getReader().read();
  const stamp = JSON.parse(new TextDecoder().decode(value)) as ProcessStamp;
  return {
    stamp,
    stop: async () => {
      child.kill(9);
      await child.exited;
    },
  };
}

describe.skipIf(!hasTable)("this OS's process table", () => {
  test("this process is alive under its own stamp; its pid under another start time was an earlier process, gone", () => {
    const own = ownStamp();
    expect(own).not.toBeNull();
    expect(ownerState(own!)).toBe("alive");
    expect(ownerState({ ...own!, start: `${own!.start}1` })).toBe("gone");
    if (process.platform === "linux") expect(own!.start).toBe(procFacts(process.pid)!.startTime);
  });

  test("another process: alive under the stamp it reports, gone under another start time, gone once it exited", async () => {
    const own = ownStamp()!;
    const child = await stampedChild();
    expect(child.stamp.space).toBe(own.space);
    if (process.platform === "linux") expect(child.stamp.start).toBe(procFacts(child.stamp.pid)!.startTime);
    expect(ownerState(child.stamp)).toBe("alive");
    expect(ownerState({ ...child.stamp, start: `${child.stamp.start}1` })).toBe("gone");
    await child.stop();
    expect(ownerState(child.stamp)).toBe("gone");
  });
});
