// Temps of dead writers are swept; nothing else ever is. Real files and real processes: a temp's
// owner is a real child process (alive, then killed and reaped), its start time read from /proc
// by the test itself, never through the code under test. The per-write sweep runs in the
// directory of a write; the start-up pass walks every read-write workdir within its bounds.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { ownStamp } from "../../platform/fs/process-stamp.ts";
import { createFileService } from "../../src/fs/index.ts";
import { tempName, tempOwner } from "../../src/fs/temp-name.ts";
import { BUN, procFacts } from "../support/proc.ts";
import { tempsIn } from "./disk-snapshot.ts";
import { expectCode, registry, tempDir, workdir, write } from "./helpers.ts";

// real processes and mounts on a shared 2-core machine: a ceiling, not a timing assertion
setDefaultTimeout(60_000);

const linux = process.platform === "linux";
// the owners' start times are read from /proc by the test itself (test/platform/process-stamp.test.ts covers every OS)
if (!linux) console.warn("temp-sweep: skipped: reads process start times from /proc");
const children: { kill(sig?: number): void }[] = [];
afterAll(() => {
  for (const c of children) c.kill(9);
});

/** A live process whose stamp the test reads from /proc itself. */
function liveChild(): { pid: number; start: string; stop: () => Promise<void> } {
  const child = Bun.spawn([BUN, "-e", "await new Promise(() => {})"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  children.push(child);
  const facts = procFacts(child.pid);
  if (facts === null) throw new Error("child not in /proc");
  return {
    pid: child.pid,
    start: facts.startTime,
    stop: async () => {
      child.kill(9);
      await child.exited;
    },
  };
}

function temp(pid: number, start: string, space = ownStamp()!.space, random = "0123456789ab"): string {
  return `.serverfs-tmp-${pid}-${start}-${space}-${random}`;
}

describe.skipIf(!linux)("temps of dead writers", () => {
  test("the name records this process's pid, start time (from /proc/self/stat) and pid space", () => {
    const name = tempName();
    const owner = tempOwner(name);
    expect(owner).toEqual({ pid: process.pid, start: procFacts(process.pid)!.startTime, space: ownStamp()!.space });
    expect(name).toMatch(/^\.serverfs-tmp-\d+-\d+-[0-9a-f]{8}-[0-9a-f]{12}$/);
    expect(tempName()).not.toBe(name);
    expect(tempOwner(".serverfs-tmp-0123456789abcdef")).toBeNull(); // the older layout has no owner
  });

  test("a write sweeps its directory once: dead owners' temps go; live, foreign, unowned and non-file temps stay", async () => {
    const base = tempDir();
    const root = path.join(base, "root");
    const child = liveChild();
    const dead = liveChild();
    await dead.stop();
    const self = ownStamp()!;
    const kept = [
      temp(child.pid, child.start),
      temp(self.pid, self.start),
      temp(dead.pid, dead.start, "00000000"), // another pid space: cannot be judged here
      ".serverfs-tmp-0123456789abcdef",
    ].sort();
    const removed = [temp(dead.pid, dead.start, undefined, "aaaaaaaaaaaa"), temp(1, "999999999999"), temp(child.pid, `${child.start}0`)]; // gone; pid 1 and the child with another start time: reused pids
    fs.mkdirSync(path.join(root, "sub"), { recursive: true });
    for (const n of [...kept, ...removed]) write(root, `sub/${n}`, "left behind");
    fs.mkdirSync(path.join(root, "sub", temp(dead.pid, dead.start, undefined, "bbbbbbbbbbbb"))); // a directory is never removed
    fs.symlinkSync("/etc/passwd", path.join(root, "sub", temp(dead.pid, dead.start, undefined, "cccccccccccc")));
    write(root, "other/" + temp(dead.pid, dead.start), "another directory: not swept by a write in sub");
    const svc = createFileService(registry([workdir("w", root, { read_only: false })]));
    try {
      await svc.createTextFile({ workdir: "w", path: "sub/new.txt", content: "x" });
      const left = tempsIn(path.join(root, "sub"));
      expect(left).toEqual(
        [...kept, temp(dead.pid, dead.start, undefined, "bbbbbbbbbbbb"), temp(dead.pid, dead.start, undefined, "cccccccccccc")].sort(),
      );
      expect(fs.readFileSync("/etc/passwd").length).toBeGreaterThan(0);
      expect(tempsIn(path.join(root, "other")).length).toBe(1);
      // once per directory per service: a temp that appears later waits for the next serve
      write(root, `sub/${temp(dead.pid, dead.start, undefined, "dddddddddddd")}`, "later");
      await svc.createTextFile({ workdir: "w", path: "sub/new2.txt", content: "x" });
      expect(tempsIn(path.join(root, "sub"))).toContain(temp(dead.pid, dead.start, undefined, "dddddddddddd"));
      // the child dies: the next service's write removes its temp too
      await child.stop();
      const next = createFileService(registry([workdir("w", root, { read_only: false })]));
      await next.createTextFile({ workdir: "w", path: "sub/new3.txt", content: "x" });
      next.close();
      expect(tempsIn(path.join(root, "sub")).filter((n) => n.startsWith(`.serverfs-tmp-${child.pid}-`))).toEqual([]);
    } finally {
      svc.close();
    }
  });

  test("the start-up pass: read-write workdirs only, within its entry and depth bounds, never shown by any tool", async () => {
    const base = tempDir();
    const rw = path.join(base, "rw");
    const ro = path.join(base, "ro");
    const dead = liveChild();
    await dead.stop();
    const orphan = temp(dead.pid, dead.start);
    for (const d of ["", "a", "a/b", "a/b/c", "a/b/c/d"]) write(rw, path.join(d, orphan), "left behind");
    write(rw, ".hidden/" + orphan, "hidden directories are not entered");
    write(rw, "a/needle.txt", "needle\n");
    write(ro, orphan, "a read-only workdir is never changed");
    const svc = createFileService(registry([workdir("rw", rw, { read_only: false }), workdir("ro", ro, { read_only: true })]));
    try {
      // what every tool shows, before: no temp anywhere
      expect((await svc.listDirectory({ workdir: "rw", path: "a" })).entries.map((e) => e.name)).toEqual(["b", "needle.txt"]);
      expect((await svc.findFiles({ workdir: "rw", pattern: "*" })).matches.map((m) => m.path)).toEqual(["a/needle.txt"]);
      expect((await svc.searchText({ workdir: "rw", query: "left" })).matches).toEqual([]);
      expect(JSON.stringify(await svc.directoryTree({ workdir: "rw" }))).not.toContain("serverfs-tmp");
      await expectCode(svc.statFile({ workdir: "rw", path: `a/${orphan}` }), "RESERVED_PATH");
      await expectCode(svc.readTextFile({ workdir: "rw", path: orphan }), "RESERVED_PATH");

      const shallow = await svc.sweepTemps({ maxEntries: 1000, maxDepth: 2 });
      expect(shallow).toMatchObject({ workdirs: 1, removed: 3, truncated: true });
      expect(fs.existsSync(path.join(rw, "a/b/c", orphan))).toBe(true);
      const other = createFileService(registry([workdir("rw", rw, { read_only: false })]));
      const few = await other.sweepTemps({ maxEntries: 2, maxDepth: 8 });
      other.close();
      // the root's two entries left (a, .hidden) come in one read step; then the bound stops the walk
      expect(few).toMatchObject({ directories: 1, entries: 2, truncated: true });
      const all = await svc.sweepTemps();
      expect(all).toMatchObject({ workdirs: 1, removed: 2, truncated: false });
      for (const d of ["", "a", "a/b", "a/b/c", "a/b/c/d"]) expect(fs.existsSync(path.join(rw, d, orphan))).toBe(false);
      expect(fs.existsSync(path.join(rw, ".hidden", orphan))).toBe(true);
      expect(fs.existsSync(path.join(ro, orphan))).toBe(true);
    } finally {
      svc.close();
    }
  });
});
