// search_text's worker thread in a real serve process (from source, or the executable
// SERVERFS_TEST_SERVE_BIN names: .ci/run's compiled-binary lane, where the worker must come from
// the embedded entry point): serve starts its worker thread once it is up, before any search, the
// searches run on that same thread (no new one), and the answers equal what one thread gives.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dir, "../..");
const linux = process.platform === "linux";
// starting serve from source takes seconds on a loaded machine (a ceiling, not a timing assertion)
setDefaultTimeout(60_000);

/**
 * Thread ids of `pid` named "Worker", the name Bun gives a Web Worker's thread. Not a count of
 * Web Workers: the engine briefly runs helper threads of the same name now and then (seen here:
 * two for a moment, one again after), so the test follows the worker's thread id instead.
 */
function workerThreads(pid: number): Set<string> {
  const out = new Set<string>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      if (fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() === "Worker") out.add(tid);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

/** The ids in both sets. */
const common = (a: Set<string>, b: Set<string>) => [...a].filter((tid) => b.has(tid));

describe.skipIf(!linux)("search worker in serve (Linux: thread counts from /proc)", () => {
  let base = "";
  let client: Client;
  let pid = 0;
  beforeAll(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-searchworker-")));
    const root = path.join(base, "w");
    // enough files for many batches: the worker takes part however the threads are scheduled
    for (let d = 0; d < 20; d++) {
      fs.mkdirSync(path.join(root, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(root, `d${d}`, `f${f}.txt`), `line one\n${f % 10 === 0 ? `needle ${d}/${f}\n` : "plain\n"}${"filler\n".repeat(40)}`);
    }
    const config = path.join(base, "serverfs.toml");
    fs.writeFileSync(config, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(root)}\nread_only = true\n`);
    const bin = process.env.SERVERFS_TEST_SERVE_BIN;
    const cmd = bin ? { command: path.resolve(bin), args: ["serve", "--config", config] } : { command: process.execPath, args: [path.join(ROOT, "src", "cli.ts"), "serve", "--config", config] };
    const transport = new StdioClientTransport({ ...cmd, cwd: base, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base }, stderr: "ignore" });
    client = new Client({ name: "search-worker-test", version: "0" });
    await client.connect(transport);
    await client.listTools();
    pid = transport.pid as number;
  });
  afterAll(async () => {
    await client?.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test("serve starts its worker thread before any search, searches reuse it, answers are complete and ordered", async () => {
    // it comes up in the background after start-up: wait for it (a ceiling, not a timing assertion)
    for (let i = 0; i < 200 && workerThreads(pid).size === 0; i++) await Bun.sleep(25);
    const before = workerThreads(pid);
    expect(before.size).toBeGreaterThanOrEqual(1);
    const call = async (query: string, limit: number) => (await client.callTool({ name: "search_text", arguments: { workdir: "w", query, limit } })).structuredContent as { matches: { path: string; line: number; text: string }[]; returned: number; truncated: boolean; unreadable: number; ignored: number };
    const first = await call("needle", 100);
    // 200 matching files, one match each: limit 100 → truncated, the first 100 in walk order
    expect(first.returned).toBe(100);
    expect(first.truncated).toBe(true);
    const expected: string[] = [];
    for (let d = 0; d < 20; d++) for (const f of Array.from({ length: 100 }, (_, i) => `f${i}.txt`).sort()) if (Number(f.slice(1, -4)) % 10 === 0) expected.push(`d${d}/${f}`);
    const walkOrder = expected.sort((a, b) => (a < b ? -1 : 1));
    // one match per matching file, on line 2
    expect(first.matches.map((m) => `${m.path}:${m.line}`)).toEqual(walkOrder.slice(0, 100).map((p) => `${p}:2`));
    const none = await call("no such text", 100);
    expect(none).toEqual({ matches: [], returned: 0, truncated: false, unreadable: 0, ignored: 0 });
    // The thread that was there before any search ran both: a worker started per search, or
    // restarted, would be a thread with a new id.
    expect(common(before, workerThreads(pid)).length).toBeGreaterThanOrEqual(1);
  });
});
