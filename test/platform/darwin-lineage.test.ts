// macOS stop-proof pieces that are pure functions of kernel answers, run on every OS: the decoders
// of struct kinfo_proc, proc_uniqidentifierinfo and struct kevent (offsets asserted against the
// xnu headers), the watcher's shared ring through a real second thread, and TaskLineage over
// recorded event sequences (fork, exec, reparent, setuid exec, exit) on the three kernel
// behaviours xnu has shipped. What only a Mac proves is in docs/platform.md, "checks to run on a Mac".
import { describe, expect, test } from "bun:test";
import { createBirthRing, ringReader, ringWriter } from "../../platform/darwin/birth-ring.ts";
import { decodeKEvent, encodeKEvent, EVFILT_PROC, KEVENT_SIZE, NOTE_EXEC, NOTE_EXIT, NOTE_FORK, watchProcess, wakeFor, EVFILT_USER, EV_RECEIPT } from "../../platform/darwin/kevent.ts";
import { KINFO, KINFO_PROC_SIZE, parseKinfoProcs } from "../../platform/darwin/kinfo-proc.ts";
import { TaskLineage, type Birth, type LineageEntry, type ProcIds } from "../../platform/darwin/lineage.ts";
import { parseLeaderIds } from "../../platform/darwin/marker-file.ts";
import { parseUniqueIds, PROC_PIDUNIQIDENTIFIERINFO, UNIQ, UNIQ_IDENTIFIER_INFO_SIZE } from "../../platform/darwin/unique-ids.ts";

describe("struct kinfo_proc (sys/sysctl.h, 64-bit caller)", () => {
  test("size and offsets are the header's, with LP64 alignment", () => {
    // extern_proc: p_un (16: the timeval is int64 + int32, padded) + 2 pointers = 32, p_flag at 32,
    // p_stat (char) at 36, p_pid at 40 ... p_comm[17] at 243; sizeof(extern_proc) = 296.
    // eproc at 296: 2 pointers, _pcred (72 + 8 + 5 ints, padded to 96), _ucred at 408 (cr_uid at
    // 412 + 8 = 420), vmspace, e_ppid at 560, e_pgid at 564. sizeof(kinfo_proc) = 648, as
    // `sysctl kern.proc.all` buffers on every 64-bit Mac are multiples of.
    expect(KINFO_PROC_SIZE).toBe(648);
    expect(KINFO).toEqual({ startSec: 0, startUsec: 8, stat: 36, pid: 40, comm: 243, commLength: 17, uid: 420, ppid: 560, pgid: 564 });
  });

  function record(fields: { pid: number; ppid: number; pgid: number; uid: number; stat: number; comm: string; sec: bigint; usec: number }): Uint8Array {
    const b = new Uint8Array(KINFO_PROC_SIZE).fill(0xee);
    const v = new DataView(b.buffer);
    v.setBigInt64(KINFO.startSec, fields.sec, true);
    v.setInt32(KINFO.startUsec, fields.usec, true);
    v.setInt8(KINFO.stat, fields.stat);
    v.setInt32(KINFO.pid, fields.pid, true);
    b.fill(0, KINFO.comm, KINFO.comm + KINFO.commLength);
    b.set(new TextEncoder().encode(fields.comm).subarray(0, 16), KINFO.comm);
    v.setUint32(KINFO.uid, fields.uid, true);
    v.setInt32(KINFO.ppid, fields.ppid, true);
    v.setInt32(KINFO.pgid, fields.pgid, true);
    return b;
  }

  test("records decode field by field; pid 0, and a trailing partial record, are left out", () => {
    const a = record({ pid: 4242, ppid: 1, pgid: 4242, uid: 0, stat: 2, comm: "sudo", sec: 1_764_000_000n, usec: 123456 });
    const z = record({ pid: 77, ppid: 4242, pgid: 4242, uid: 501, stat: 5, comm: "a-sixteen-chars!", sec: 5n, usec: 0 });
    const s = record({ pid: 78, ppid: 4242, pgid: 9, uid: 501, stat: 4, comm: "sleep", sec: 6n, usec: 7 });
    const kernel = record({ pid: 0, ppid: 0, pgid: 0, uid: 0, stat: 2, comm: "kernel_task", sec: 0n, usec: 0 });
    const buffer = new Uint8Array(KINFO_PROC_SIZE * 5);
    [a, z, s, kernel].forEach((r, i) => buffer.set(r, i * KINFO_PROC_SIZE));
    const parsed = parseKinfoProcs(buffer, KINFO_PROC_SIZE * 4 + 100);
    expect(parsed).toEqual([
      { pid: 4242, ppid: 1, pgid: 4242, uid: 0, zombie: false, stopped: false, command: "sudo", startTime: "1764000000.123456" },
      { pid: 77, ppid: 4242, pgid: 4242, uid: 501, zombie: true, stopped: false, command: "a-sixteen-chars!", startTime: "5.0" },
      { pid: 78, ppid: 4242, pgid: 9, uid: 501, zombie: false, stopped: true, command: "sleep", startTime: "6.7" },
    ]);
  });
});

describe("struct proc_uniqidentifierinfo (sys/proc_info_private.h)", () => {
  test("flavor, size and offsets are the header's", () => {
    expect(PROC_PIDUNIQIDENTIFIERINFO).toBe(17);
    expect(UNIQ_IDENTIFIER_INFO_SIZE).toBe(56); // the header's own _Static_assert
    expect(UNIQ).toEqual({ unique: 16, parentUnique: 24, version: 32, parentVersion: 36 });
  });
  test("ids decode, the 64-bit ones without loss; a zeroed p_reserve2 reads as no parent version", () => {
    const b = new Uint8Array(56).fill(0xab);
    const v = new DataView(b.buffer);
    v.setBigUint64(16, 0x1_0000_0001n, true);
    v.setBigUint64(24, 18_446_744_073_709_551_000n, true);
    v.setInt32(32, 90_001, true);
    v.setInt32(36, 0, true);
    expect(parseUniqueIds(b)).toEqual({ unique: 0x1_0000_0001n, parentUnique: 18_446_744_073_709_551_000n, version: 90_001, parentVersion: 0 });
  });
});

describe("struct kevent (sys/event.h)", () => {
  test("32 bytes; fields round-trip at their offsets; the flags are the header's", () => {
    expect(KEVENT_SIZE).toBe(32);
    expect([EVFILT_PROC, EVFILT_USER, NOTE_EXIT >>> 0, NOTE_FORK, NOTE_EXEC, EV_RECEIPT]).toEqual([-5, -10, 0x80000000, 0x40000000, 0x20000000, 0x40]);
    const b = new Uint8Array(2 * KEVENT_SIZE);
    encodeKEvent(b, 1, watchProcess(31337));
    const v = new DataView(b.buffer, KEVENT_SIZE);
    expect(v.getBigUint64(0, true)).toBe(31337n);
    expect(v.getInt16(8, true)).toBe(-5);
    expect(v.getUint16(10, true)).toBe(0x0001 | 0x0020 | 0x0040);
    expect(v.getUint32(12, true)).toBe(0xe0000000);
    expect(decodeKEvent(b, 1)).toEqual({ ident: 31337n, filter: -5, flags: 0x61, fflags: 0xe0000000, data: 0n });
    expect(b.subarray(0, KEVENT_SIZE).every((x) => x === 0)).toBe(true);
    encodeKEvent(b, 0, wakeFor(9));
    expect(decodeKEvent(b, 0)).toEqual({ ident: 9n, filter: -10, flags: 0x0001 | 0x0010 | 0x0040, fflags: 0x01000000, data: 0n });
  });
});

describe("the watcher's ring between two threads", () => {
  test("every record a second thread writes arrives whole and in order, the 64-bit ids without loss", async () => {
    const ring = createBirthRing(64);
    const read = ringReader(ring);
    const source = `
      const { workerData, parentPort } = require("node:worker_threads");
      const { ringWriter } = require(${JSON.stringify(new URL("../../platform/darwin/birth-ring.ts", import.meta.url).pathname)});
      const write = ringWriter(workerData.ring);
      let i = 0;
      while (i < workerData.total) {
        if (write({ pid: i, unique: BigInt(i) * 4294967311n, parentUnique: 2n ** 64n - 1n - BigInt(i), version: i, parentVersion: -i | 0 })) i++;
      }
      parentPort.postMessage("done");`;
    const url = URL.createObjectURL(new Blob([source], { type: "application/javascript" }));
    const total = 20_000;
    const worker = new Worker(url, { workerData: { ring, total } } as WorkerOptions);
    const done = new Promise((resolve) => worker.addEventListener("message", resolve));
    const got: Birth[] = [];
    let finished = false;
    void done.then(() => (finished = true));
    while (got.length < total) {
      got.push(...read().births);
      if (got.length < total) await (finished ? Promise.resolve() : new Promise((r) => setImmediate(r)));
    }
    await done;
    worker.terminate();
    expect(got.length).toBe(total);
    got.forEach((b, i) => {
      expect(b).toEqual({ pid: i, unique: BigInt(i) * 4294967311n, parentUnique: 2n ** 64n - 1n - BigInt(i), version: i, parentVersion: -i | 0 });
    });
  });

  test("a full ring refuses the record and counts the drop; reading frees the room", () => {
    const ring = createBirthRing(2);
    const write = ringWriter(ring);
    const read = ringReader(ring);
    const b = (n: number): Birth => ({ pid: n, unique: BigInt(n), parentUnique: 0n, version: n, parentVersion: 0 });
    expect([write(b(1)), write(b(2)), write(b(3))]).toEqual([true, true, false]);
    expect(read()).toEqual({ births: [b(1), b(2)], dropped: 1 });
    expect(write(b(4))).toBe(true);
    expect(read()).toEqual({ births: [b(4)], dropped: 1 });
  });
});

/**
 * A recorder of xnu's lineage ids over fork, exec, exit and reparenting, for the three behaviours
 * xnu has shipped: up to xnu-10002 (macOS 14.0) exec keeps the proc, so p_puniqueid is set once at
 * fork; from xnu-10063 (14.4) exec inserts a new proc as a child of the current parent
 * (pinsertchild), so an orphan's exec takes launchd's id; from xnu-11417 (15.4) the original
 * parent's pid version is reported too and never changes.
 */
type Kernel = "xnu-10002" | "xnu-10063" | "xnu-11417";
const KERNELS: Kernel[] = ["xnu-10002", "xnu-10063", "xnu-11417"];

interface SimProc {
  pid: number;
  ppid: number;
  zombie: boolean;
  ids: ProcIds;
}

class Kern {
  private unique = 1n;
  private version = 1;
  private nextPid = 100;
  readonly procs = new Map<number, SimProc>();
  readonly births: Birth[] = [];
  constructor(readonly kernel: Kernel) {
    this.procs.set(1, { pid: 1, ppid: 0, zombie: false, ids: { unique: 1n, parentUnique: 0n, version: 1, parentVersion: 0 } });
  }
  fork(parent: number, pid = this.nextPid++): number {
    const p = this.procs.get(parent)!;
    const ids: ProcIds = {
      unique: ++this.unique,
      parentUnique: p.ids.unique,
      version: ++this.version,
      parentVersion: this.kernel === "xnu-11417" ? p.ids.version : 0,
    };
    this.procs.set(pid, { pid, ppid: parent, zombie: false, ids });
    return pid;
  }
  /** execve, setuid or not (ids do not depend on credentials). */
  exec(pid: number): void {
    const p = this.procs.get(pid)!;
    if (this.kernel !== "xnu-10002") p.ids = { ...p.ids, parentUnique: this.procs.get(p.ppid)!.ids.unique };
  }
  /** exit and reaping: the children go to launchd with their ids unchanged (proc_reparentlocked). */
  exit(pid: number, reaped = true): void {
    for (const child of this.procs.values()) if (child.ppid === pid) child.ppid = 1;
    if (reaped) this.procs.delete(pid);
    else this.procs.get(pid)!.zombie = true;
  }
  /** What the fork watcher writes when it lists `pid` as a child of a watched process. */
  record(pid: number): Birth {
    const birth = { pid, ...this.procs.get(pid)!.ids };
    this.births.push(birth);
    return birth;
  }
  entries(): LineageEntry[] {
    return [...this.procs.values()].map((p) => ({ pid: p.pid, zombie: p.zombie, ids: { ...p.ids } }));
  }
  lineage(leader: number): TaskLineage {
    return new TaskLineage(this.procs.get(leader)!.ids);
  }
  byUnique(): Map<bigint, Birth> {
    return new Map(this.births.map((b) => [b.unique, b]));
  }
}

function classify(k: Kern, lineage: TaskLineage, members: number[]) {
  lineage.absorb(k.births);
  const found = lineage.classify(k.entries(), new Set(members), k.byUnique());
  return { members: found.members.sort(), uncertain: found.uncertain.sort() };
}

describe("TaskLineage over recorded event sequences", () => {
  for (const kernel of KERNELS) {
    describe(kernel, () => {
      test("Node → /bin/zsh -c 'sleep 300 & disown': the recorded sleep is a member after zsh exits", () => {
        const k = new Kern(kernel);
        k.fork(1, 50); // the Bridge's own process: older than every task
        const node = k.fork(50);
        const zsh = k.fork(node);
        k.exec(zsh);
        k.record(zsh);
        const sleep = k.fork(zsh);
        k.record(sleep);
        k.exec(sleep);
        k.exit(zsh);
        expect(classify(k, k.lineage(node), [node])).toEqual({ members: [sleep], uncertain: [] });
      });

      test("the same with nothing recorded (zsh gone before the watcher listed it): the orphan is uncertain, never 'not ours'", () => {
        const k = new Kern(kernel);
        const node = k.fork(1);
        const zsh = k.fork(node);
        const sleep = k.fork(zsh);
        k.exec(sleep);
        k.exit(zsh);
        expect(classify(k, k.lineage(node), [node])).toEqual({ members: [], uncertain: [sleep] });
      });

      test("setsid and a double fork: the grandchild and what it forks after re-parenting are members", () => {
        const k = new Kern(kernel);
        const leader = k.fork(1);
        const first = k.fork(leader);
        k.record(first);
        const second = k.fork(first);
        k.record(second);
        k.exit(first);
        const late = k.fork(second);
        k.record(late);
        k.exec(late);
        expect(classify(k, k.lineage(leader), [leader])).toEqual({ members: [second, late].sort(), uncertain: [] });
      });

      test("a setuid exec (sudo) keeps its ids: it and its child are members through live parents, unrecorded", () => {
        const k = new Kern(kernel);
        const leader = k.fork(1);
        const shell = k.fork(leader);
        const sudo = k.fork(shell);
        k.exec(sudo); // setuid root: the credentials change, the ids do not
        const sleep = k.fork(sudo);
        k.exec(sleep);
        // The engine's parent-link walk finds these while their parents live; lineage agrees.
        expect(classify(k, k.lineage(leader), [leader, shell])).toEqual({ members: [sudo, sleep].sort(), uncertain: [] });
      });

      test("processes born before the leader, and orphans of parents born before it, are not the task's", () => {
        const k = new Kern(kernel);
        const daemon = k.fork(1);
        const helper = k.fork(daemon);
        const leader = k.fork(1);
        k.exit(daemon); // helper: an orphan whose parent is older than the task
        const other = k.fork(1); // a launchd child born during the task
        expect(classify(k, k.lineage(leader), [leader])).toEqual({ members: [], uncertain: [] });
        expect(k.procs.has(helper) && k.procs.has(other)).toBe(true);
      });

      test("another task's orphan is not this task's, and is that task's member", () => {
        const k = new Kern(kernel);
        const mine = k.fork(1);
        const theirs = k.fork(1);
        const child = k.fork(theirs);
        k.record(child);
        const grandchild = k.fork(child);
        k.record(grandchild);
        k.exit(child);
        expect(classify(k, k.lineage(mine), [mine])).toEqual({ members: [], uncertain: [] });
        expect(classify(k, k.lineage(theirs), [theirs])).toEqual({ members: [grandchild], uncertain: [] });
      });

      test("an uncertain zombie is not reported (it runs nothing); a reused pid is judged by its own ids", () => {
        const k = new Kern(kernel);
        const leader = k.fork(1);
        const gone = k.fork(leader);
        const orphan = k.fork(gone);
        k.exit(gone);
        k.exit(orphan, false);
        const member = k.fork(leader, 400);
        k.record(member);
        k.exit(member);
        k.fork(1, 400); // pid 400 again: a launchd child with its own, newer ids
        expect(classify(k, k.lineage(leader), [leader])).toEqual({ members: [], uncertain: [] });
      });
    });
  }

  test("an orphan that execs after re-parenting: its recorded birth keeps it on every kernel", () => {
    for (const kernel of KERNELS) {
      const k = new Kern(kernel);
      const leader = k.fork(1);
      const parent = k.fork(leader);
      k.record(parent);
      const orphan = k.fork(parent);
      k.record(orphan);
      k.exit(parent);
      k.exec(orphan); // on xnu-10063 and later its live p_puniqueid is now launchd's
      expect(classify(k, k.lineage(leader), [leader])).toEqual({ members: [orphan], uncertain: [] });
    }
  });

  test("unrecorded, the same orphan is uncertain where the kernel keeps a link, and launchd's child on xnu-10063 to 11215", () => {
    const verdicts = KERNELS.map((kernel) => {
      const k = new Kern(kernel);
      const leader = k.fork(1);
      const parent = k.fork(leader);
      const orphan = k.fork(parent);
      k.exit(parent);
      k.exec(orphan);
      return classify(k, k.lineage(leader), [leader]);
    });
    // xnu-10002: p_puniqueid still names the dead parent; xnu-11417: p_orig_ppidversion does.
    // xnu-10063 to xnu-11215 keep no link at all: only the fork watcher's record (test above) or
    // the task marker finds it. docs/platform.md names this gap.
    expect(verdicts).toEqual([
      { members: [], uncertain: [102] },
      { members: [], uncertain: [] },
      { members: [], uncertain: [102] },
    ]);
  });
});

describe("the sweep after a Bridge crash: the leader ids kept in the marker file", () => {
  test("the record round-trips; anything else in the file is no record", () => {
    expect(parseLeaderIds("18446744073709551615 7 2147483647 -5\n")).toEqual({ unique: 18446744073709551615n, parentUnique: 7n, version: 2147483647, parentVersion: -5 });
    for (const bad of ["", "1 2 3 4", "1 2 3 4\n5", "18446744073709551616 1 1 1\n", "a b c d\n", "1 2 3\n", " 1 2 3 4\n"]) {
      expect(parseLeaderIds(bad)).toBeNull();
    }
  });

  for (const kernel of KERNELS) {
    test(`${kernel}: with no watcher and the leader gone, its orphans are members and deeper unseen lines are uncertain`, () => {
      const k = new Kern(kernel);
      const leader = k.fork(1);
      const recorded = k.procs.get(leader)!.ids; // what the spawn wrote into the marker file
      const child = k.fork(leader);
      const middle = k.fork(leader);
      const grandchild = k.fork(middle);
      k.exit(leader);
      k.exit(middle);
      const sweep = new TaskLineage(recorded);
      const found = sweep.classify(k.entries(), new Set(), new Map());
      expect({ members: found.members.sort(), uncertain: found.uncertain }).toEqual({ members: [child], uncertain: [grandchild] });
    });
  }
});
