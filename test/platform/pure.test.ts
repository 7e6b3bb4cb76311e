// Pure functions that run on every OS: env scrubbing, the stderr ring, Windows argv quoting,
// /proc and libproc decoders, pipe names.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "bun:test";
import { environmentFromProcArgs, parseBsdInfo } from "../../platform/darwin/proc-reader.ts";
import { scrubEnv } from "../../platform/env.ts";
import { parseProcStat, readProcFile } from "../../platform/linux/proc-reader.ts";
import { findMarker, findMarkerInBlock } from "../../platform/posix/process-table.ts";
import { removeTree } from "../../platform/fs/remove-tree.ts";
import { ByteRing, StreamTail } from "../../platform/ring-buffer.ts";
import { joinWindowsCommandLine, quoteWindowsArg, splitWindowsCommandLine } from "../../platform/windows/argv-quote.ts";

describe("scrubEnv", () => {
  test("drops Bun control variables and serverfs-internal ones (any case), keeps the rest, sets the marker", () => {
    const out = scrubEnv(
      {
        PATH: "/bin",
        HOME: "/h",
        BUN_OPTIONS: "--preload x.js",
        bun_options: "x",
        BUN_BE_BUN: "1",
        BUN_FEATURE_FLAG_NO_ORPHANS: "1",
        Bun_Feature_Flag_X: "1",
        SERVERFS_CONFIG: "/secret",
        SERVERFS_RUN_ID: "forged",
        BUN_INSTALL: "/keep",
        UNDEF: undefined,
        "BAD=NAME": "x",
        NUL: "a\0b",
      },
      "run-1",
    );
    expect(out).toEqual({ PATH: "/bin", HOME: "/h", BUN_INSTALL: "/keep", SERVERFS_RUN_ID: "run-1" });
    expect(scrubEnv({ SERVERFS_RUN_ID: "x", A: "1" })).toEqual({ A: "1" });
  });

  test("a variable named __proto__ stays a variable and never replaces the copy's prototype", () => {
    const env = JSON.parse('{"__proto__": "x", "constructor": "y", "A": "1"}') as Record<string, string>;
    const out = scrubEnv(env);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out).sort()).toEqual(["A", "__proto__", "constructor"]);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toBe("x");
  });
});

describe("StreamTail", () => {
  const bytes = (t: string) => new TextEncoder().encode(t);

  test("drained() resolves only once the stream has ended, with every byte it carried in the tail", async () => {
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const tail = new StreamTail(new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) }), 64);
    ctl.enqueue(bytes("first "));
    let drained = false;
    const waiting = tail.drained(60_000).then(() => (drained = true));
    await Bun.sleep(0);
    expect(drained).toBe(false);
    ctl.enqueue(bytes("last"));
    ctl.close();
    await waiting;
    expect(new TextDecoder().decode(tail.snapshot())).toBe("first last");
  });

  test("a stream that never ends costs drained() its bound, never a hang", async () => {
    let ctl!: ReadableStreamDefaultController<Uint8Array>;
    const tail = new StreamTail(new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) }), 64);
    ctl.enqueue(bytes("open"));
    await tail.drained(10);
    expect(new TextDecoder().decode(tail.snapshot())).toBe("open");
  });
});

describe("ByteRing", () => {
  test("keeps exactly the most recent bytes across wraps and oversized chunks", () => {
    const ring = new ByteRing(5);
    ring.push(new TextEncoder().encode("abc"));
    expect(new TextDecoder().decode(ring.snapshot())).toBe("abc");
    ring.push(new TextEncoder().encode("defg"));
    expect(new TextDecoder().decode(ring.snapshot())).toBe("cdefg");
    ring.push(new TextEncoder().encode("0123456789"));
    expect(new TextDecoder().decode(ring.snapshot())).toBe("56789");
    for (const ch of "xyz") ring.push(new TextEncoder().encode(ch));
    expect(new TextDecoder().decode(ring.snapshot())).toBe("89xyz");
    const empty = new ByteRing(0);
    empty.push(new Uint8Array([1, 2]));
    expect(empty.snapshot().length).toBe(0);
  });

  test("holds memory only for what arrived, up to the limit, and wraps correctly after growing", () => {
    const ring = new ByteRing(64 * 1024);
    expect(ring.allocatedBytes).toBe(0);
    expect(ring.snapshot().length).toBe(0);
    ring.push(new TextEncoder().encode("warning: x\n"));
    expect(ring.allocatedBytes).toBeLessThanOrEqual(1024);
    expect(new TextDecoder().decode(ring.snapshot())).toBe("warning: x\n");
    // Past the limit: exactly the limit is held, and the kept bytes are the last 64 KiB in order.
    const all: number[] = [];
    for (let i = 0; i < 300; i++) {
      const chunk = new Uint8Array(997).map((_, j) => (i * 997 + j) % 251);
      for (const b of chunk) all.push(b);
      ring.push(chunk);
    }
    expect(ring.allocatedBytes).toBe(64 * 1024);
    const expected = Uint8Array.from([...new TextEncoder().encode("warning: x\n"), ...all].slice(-64 * 1024));
    expect(Buffer.from(ring.snapshot()).equals(Buffer.from(expected))).toBe(true);
    const small = new ByteRing(10);
    small.push(new TextEncoder().encode("abcdefghijkl"));
    expect(small.allocatedBytes).toBe(10);
    expect(new TextDecoder().decode(small.snapshot())).toBe("cdefghijkl");
  });
});

describe("Windows command-line quoting (CommandLineToArgvW rules)", () => {
  test("known encodings", () => {
    expect(quoteWindowsArg("plain")).toBe("plain");
    expect(quoteWindowsArg("")).toBe('""');
    expect(quoteWindowsArg("a b")).toBe('"a b"');
    expect(quoteWindowsArg('say "hi"')).toBe('"say \\"hi\\""');
    expect(quoteWindowsArg("C:\\dir with space\\")).toBe('"C:\\dir with space\\\\"');
    expect(quoteWindowsArg("a\\\\b")).toBe("a\\\\b");
    expect(joinWindowsCommandLine(["C:\\Program Files\\serverfs.exe", "bridge", "--config", "C:\\a b\\c.toml"])).toBe(
      '"C:\\Program Files\\serverfs.exe" bridge --config "C:\\a b\\c.toml"',
    );
    expect(splitWindowsCommandLine('"C:\\x y\\p.exe" a "b c" d\\"e "f""g"')).toEqual(["C:\\x y\\p.exe", "a", "b c", 'd"e', 'f"g']);
    expect(() => joinWindowsCommandLine(['bad"prog'])).toThrow();
  });

  test("round trip over 2000 adversarial argument lists", () => {
    const alphabet = ['"', "\\", " ", "\t", "a", "Z", "é", "\\\\", '\\"', "'", "^", "%", "&"];
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let n = 0; n < 2000; n++) {
      const args = Array.from({ length: 1 + Math.floor(random() * 5) }, () =>
        Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(""),
      );
      const argv = ["C:\\Program Files\\prog.exe", ...args];
      expect(splitWindowsCommandLine(joinWindowsCommandLine(argv))).toEqual(argv);
    }
  });
});

describe("process-table decoders", () => {
  test("/proc/<pid>/stat with spaces and parentheses in the command", () => {
    const line = "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 0";
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(parseProcStat(bytes(line))).toEqual({
      pid: 4242,
      ppid: 1,
      pgid: 4242,
      sid: 4242,
      zombie: false,
      stopped: false,
      threads: 1,
      blocked: false,
      startTime: "987654",
      command: "we (ird) name",
    });
    // Field 20 is the thread count; 'T' is a job-control stop and 't' a ptrace stop, which a
    // tracer outside the task can end, so only 'T' counts as stopped.
    const stoppedLine = "11 (s) T 1 11 11 0 -1 0 0 0 0 0 0 0 0 0 20 0 4 0 66 0 0";
    expect(parseProcStat(bytes(stoppedLine))).toMatchObject({ stopped: true, threads: 4, zombie: false, startTime: "66" });
    expect(parseProcStat(bytes(stoppedLine.replace(" T ", " t ")))?.stopped).toBe(false);
    expect(parseProcStat(bytes(stoppedLine.replace(" T ", " D ")))).toMatchObject({ stopped: false, blocked: true });
    expect(parseProcStat(bytes("7 (z) Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n"))).toMatchObject({ zombie: true, startTime: "5" });
    expect(parseProcStat(bytes("9 (x) X 1 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0"))?.zombie).toBe(true);
    // A view into a larger buffer decodes only its own bytes.
    const inner = bytes(`junk ${line} (tail) 99`).subarray(5, 5 + line.length);
    expect(parseProcStat(inner)?.startTime).toBe("987654");
    expect(parseProcStat(bytes("garbage"))).toBeNull();
    expect(parseProcStat(bytes("12 (short) S 1 2 3"))).toBeNull();
    expect(parseProcStat(bytes("x1 (a) S 1 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0"))).toBeNull();
  });

  test("the reused read buffer returns whole files, including ones larger than it keeps", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sfs-procread-"));
    try {
      const big = crypto.randomBytes(100 * 1024 + 17);
      fs.writeFileSync(path.join(dir, "big"), big);
      fs.writeFileSync(path.join(dir, "small"), "4242 (sh) S 1\n");
      fs.writeFileSync(path.join(dir, "empty"), "");
      expect(Buffer.compare(readProcFile(path.join(dir, "big")), big)).toBe(0);
      expect(readProcFile(path.join(dir, "small")).toString("latin1")).toBe("4242 (sh) S 1\n");
      expect(readProcFile(path.join(dir, "empty")).length).toBe(0);
      expect(() => readProcFile(path.join(dir, "missing"))).toThrow();
    } finally {
      // the product's Wine-safe removal: this file also runs in the Windows lane, where rmSync's recursion fails
      removeTree(dir);
    }
  });

  test("marker matching is exact", () => {
    expect(findMarker("A=1\0SERVERFS_RUN_ID=run-1\0B=2", ["run-1"])).toBe("run-1");
    expect(findMarker("SERVERFS_RUN_ID=run-10", ["run-1"])).toBeNull();
    expect(findMarker("XSERVERFS_RUN_ID=run-1", ["run-1"])).toBeNull();
    expect(findMarker("SERVERFS_RUN_ID=run-1", [])).toBeNull();
    // The Linux reader matches the raw environ bytes by the same rule.
    const cases: Array<[string, string[]]> = [
      ["A=1\0SERVERFS_RUN_ID=run-1\0B=2", ["run-1"]],
      ["SERVERFS_RUN_ID=run-10", ["run-1"]],
      ["XSERVERFS_RUN_ID=run-1", ["run-1"]],
      ["SERVERFS_RUN_ID=run-1", []],
      ["SERVERFS_RUN_ID=run-1\0", ["run-2", "run-1"]],
      ["A=SERVERFS_RUN_ID=run-1\0SERVERFS_RUN_ID=\0SERVERFS_RUN_ID=run-3\0", ["run-1", "run-3"]],
      ["", ["run-1"]],
    ];
    for (const [block, markers] of cases) {
      expect(findMarkerInBlock(new TextEncoder().encode(block), markers)).toBe(findMarker(block, markers));
    }
    expect(findMarkerInBlock(new TextEncoder().encode("A=SERVERFS_RUN_ID=run-1\0SERVERFS_RUN_ID=run-3"), ["run-1", "run-3"])).toBe("run-3");
  });

  test("macOS proc_bsdinfo layout and KERN_PROCARGS2 environment", () => {
    const info = new Uint8Array(136);
    const view = new DataView(info.buffer);
    view.setUint32(4, 5, true); // SZOMB
    view.setUint32(12, 321, true);
    view.setUint32(16, 1, true);
    view.setUint32(20, 501, true);
    info.set(new TextEncoder().encode("sleep"), 48);
    view.setUint32(100, 300, true);
    view.setBigUint64(120, 1700000000n, true);
    view.setBigUint64(128, 42n, true);
    expect(parseBsdInfo(info)).toEqual({
      pid: 321,
      ppid: 1,
      uid: 501,
      zombie: true,
      stopped: false,
      command: "sleep",
      pgid: 300,
      startTime: "1700000000.42",
    });
    // pbi_status SSTOP (4, sys/proc.h): a job-control stop, which xnu applies to the whole task.
    view.setUint32(4, 4, true);
    expect(parseBsdInfo(info)).toMatchObject({ zombie: false, stopped: true });
    view.setUint32(4, 2, true); // SRUN
    expect(parseBsdInfo(info)).toMatchObject({ zombie: false, stopped: false });
    const enc = (s: string) => new TextEncoder().encode(s);
    const parts = [new Uint8Array([2, 0, 0, 0]), enc("/bin/sleep\0\0\0\0"), enc("sleep\0"), enc("1000\0"), enc("A=1\0SERVERFS_RUN_ID=r1\0"), enc("\0junk")];
    const buffer = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      buffer.set(p, at);
      at += p.length;
    }
    expect(environmentFromProcArgs(buffer)).toBe("A=1\0SERVERFS_RUN_ID=r1");
    expect(environmentFromProcArgs(new Uint8Array(2))).toBe("");
  });
});
