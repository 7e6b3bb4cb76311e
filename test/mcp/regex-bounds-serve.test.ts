// Regex searches that once broke serve's promises, through a real `serverfs serve` (from source,
// or the executable SERVERFS_TEST_SERVE_BIN names: .ci/run's compiled-binary lane):
// - DFA blow-up: `a[ab]{20}[^ab]` over half a MiB of long lines of a two-letter alphabet made
//   re2js's lazy DFA fill, drop and refill its 8 MiB state cache; serve peaked at 160 MB with one
//   such search and 250-320 MB with two at once. Each search's DFA now has a small budget out of
//   one per thread (src/fs/search/scan-regex.ts).
// - A pathological pattern sent right after initialize, before the search worker was up, ran on
//   the main thread and held every other request for 1-2.6 s. The search now waits for the worker
//   (bounded), and no engine call, on any thread, sees more than a bounded number of bytes x
//   instructions.
// Each test writes the searches and a stat_file in ONE write: the stat_file must be answered
// first. That holds by construction: the searches' files go to the worker thread and the main
// thread only awaits its answer, so it reads and answers the stat_file meanwhile. Which thread
// ran the engine is read from /proc (CPU time per thread), not from the clock. The answers are exact, nothing on disk changes, and in the compiled
// lane peak RSS stays at or below 120 MB and RSS returns to within 20 MB of idle 2 s after.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { expectServeMemory, FrameServe } from "../support/frame-serve.ts";
import { isLinux } from "../support/proc.ts";
import { removeDir, tempDir } from "../support/temp.ts";
import { treeSnapshot } from "../support/tree.ts";

// a ceiling for a loaded 2-core machine, not a timing assertion
setDefaultTimeout(240_000);

/** Pseudo-random lines of `a` and `b` (a fixed seed: the same bytes every run). */
function twoLetterLines(seed: number, lineBytes: number, lines: number): Buffer {
  const out = Buffer.alloc((lineBytes + 1) * lines);
  let x = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    if (i % (lineBytes + 1) === lineBytes) {
      out[i] = 10;
      continue;
    }
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x & 0x10000 ? 97 : 98;
  }
  return out;
}

const init = { jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "regex-bounds", version: "0" } } };
const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
const search = (id: string, query: string, glob: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "search_text", arguments: { workdir: "w", query, regex: true, glob } } });
const stat = (id: string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "stat_file", arguments: { workdir: "w", path: "plain.txt" } } });
/** utime + stime of serve's main thread (`mainOnly`) or of the whole process, in clock ticks. */
function cpuTicks(pid: number, mainOnly: boolean): number {
  const stat = fs.readFileSync(mainOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}
const noMatches = { matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 };

describe.skipIf(!isLinux)("regex searches that exhaust the engine, through real serve (Linux: memory from /proc)", () => {
  let base = "";
  let workdir = "";
  let before: ReturnType<typeof treeSnapshot>;
  let config = "";
  beforeAll(() => {
    base = tempDir("sfs-regex-bounds-");
    workdir = path.join(base, "w");
    fs.mkdirSync(workdir);
    // half a MiB each, 16 KiB lines: the DFA blow-up of the report, and a second file for the second search
    for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(workdir, `blowup-${i}.txt`), twoLetterLines(17 + i, 16 * 1024, 32));
    // one 60 KiB line: over the line cap of a 904-instruction pattern (2 Mi / 904 = 2,319 bytes)
    fs.writeFileSync(path.join(workdir, "one-line.txt"), twoLetterLines(91, 60 * 1024, 1));
    // 2 KiB lines, under that cap: the engine really runs, for seconds
    for (let i = 0; i < 2; i++) fs.writeFileSync(path.join(workdir, `wide-${i}.txt`), twoLetterLines(93 + i, 2 * 1024, 128));
    fs.writeFileSync(path.join(workdir, "plain.txt"), "needle\n");
    before = treeSnapshot(workdir);
    config = path.join(base, "serverfs.toml");
    fs.writeFileSync(config, `[limits]\nsearch_timeout_seconds = 120\n\n[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(workdir)}\n`);
  }, 60_000);
  afterAll(() => {
    expect(treeSnapshot(workdir)).toEqual(before);
    removeDir(base);
  });

  test("a pathological pattern sent with initialize runs on the worker thread: stat_file written after it is answered first", async () => {
    const s = new FrameServe(config, base);
    // No warm-up: the search arrives while serve is still starting its search worker; once, this
    // thread then scanned it itself, holding every other request for the length of each engine call.
    await s.send(init, initialized, search("wide", "a[ab]{900}[^ab]", "wide-*.txt"), stat("stat"));
    expect((await s.reply("wide")).result?.structuredContent).toEqual(noMatches);
    expect(s.position("stat")).toBeLessThan(s.position("wide"));
    expect((await s.reply("stat")).result?.structuredContent).toMatchObject({ path: "plain.txt", type: "file", size: 7 });
    // Where the engine ran: the main thread's share of the process's CPU time (start-up included,
    // ~0.4 s here, against seconds of engine work on the worker). A scan on the main thread makes
    // it nearly all of it.
    expect(cpuTicks(s.proc.pid, true) / cpuTicks(s.proc.pid, false)).toBeLessThan(0.5);
    // a line over the pattern's cap is never a match, and costs no engine call
    await s.send(search("line", "a[ab]{900}[^ab]", "one-line.txt"), stat("stat2"));
    expect((await s.reply("line")).result?.structuredContent).toEqual(noMatches);
    await s.close();
  });

  test("DFA blow-up, one search then two at once: exact answers, stat_file first, memory bounded", async () => {
    const s = new FrameServe(config, base);
    await s.send(init, initialized);
    await s.reply("init");
    await s.send(stat("warm"));
    await s.reply("warm");
    const idle = s.status("VmRSS");
    await s.send(search("one", "a[ab]{20}[^ab]", "blowup-[0-3].txt"), stat("stat1"));
    expect((await s.reply("one")).result?.structuredContent).toEqual(noMatches);
    expect(s.position("stat1")).toBeLessThan(s.position("one"));
    await s.send(search("two-a", "a[ab]{20}[^ab]", "blowup-[4-7].txt"), search("two-b", "b[ab]{12}a[ab]{12}[^ab]", "blowup-*.txt"), stat("stat2"));
    expect((await s.reply("two-a")).result?.structuredContent).toEqual(noMatches);
    expect((await s.reply("two-b")).result?.structuredContent).toEqual(noMatches);
    expect(s.position("stat2")).toBeLessThan(s.position("two-a"));
    await expectServeMemory(s, idle);
    await s.close();
  });
});
