// SIGKILL in the middle of an overwrite, through a real `serverfs serve` over MCP stdio. The
// workdir is on the fault-injecting FUSE passthrough (test/fixtures/faultfs), which holds one
// operation of the write until the test has killed serve: a write of the temp file at a chosen
// offset (spread over the whole multi-MiB file), its fsync, or the rename that publishes it. The
// kill point is chosen by construction, never by timing. After each kill the target holds exactly
// the old bytes (killed before the rename) or exactly the new ones (killed in it), and the next
// serve's first write in that directory leaves no temp behind. A temp whose writer is still alive
// is never swept, neither by another serve's write nor by its start-up pass.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Subprocess } from "bun";
import { tempOwner } from "../../src/fs/temp-name.ts";
import { bareEnv } from "../support/mcp.ts";
import { BUN, CLI } from "../support/proc.ts";
import { STRESS } from "../support/stress.ts";
import { tempDir } from "../support/temp.ts";
import { tempsIn } from "./disk-snapshot.ts";
import { faultFsUnavailable, mountFaultFs, type FaultFs, type FaultRule } from "./faultfs.ts";

// real processes and mounts on a shared 2-core machine: a ceiling, not a timing assertion
setDefaultTimeout(60_000);

const skip = faultFsUnavailable();
if (skip !== null) console.warn(`kill-rounds: skipped: ${skip}`);

const SIZE = 2 * 1024 * 1024 + 4321;
const TEMPS = "/w/.serverfs-tmp-*";

interface Reply {
  id: number;
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
}

/** A serve process spoken to in raw JSON-RPC lines, with its pid, its exit and its stderr lines. */
interface Serve {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Resolves with the first stderr line (parsed) whose event is `event`. */
  logged(event: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

async function startServe(toml: string, cwd: string): Promise<Serve> {
  const proc = Bun.spawn([BUN, CLI, "serve", "--config", toml], { cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe", env: bareEnv(cwd) });
  const waiting = new Map<number, (r: Reply) => void>();
  const lines = async (stream: ReadableStream<Uint8Array>, each: (line: string) => void) => {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of stream) {
      partial += decoder.decode(chunk, { stream: true });
      const parts = partial.split("\n");
      partial = parts.pop() as string;
      for (const l of parts) if (l !== "") each(l);
    }
  };
  void lines(proc.stdout, (l) => {
    const r = JSON.parse(l) as Reply;
    waiting.get(r.id)?.(r);
  });
  const logs: Record<string, unknown>[] = [];
  const logWaiters: { event: string; resolve: (l: Record<string, unknown>) => void }[] = [];
  void lines(proc.stderr, (l) => {
    // serve logs one JSON object per line; anything else on stderr (a runtime's own note) is not a log line
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(l) as Record<string, unknown>;
    } catch {
      return;
    }
    logs.push(line);
    for (const w of logWaiters.filter((w) => w.event === line.event)) w.resolve(line);
  });
  let next = 1;
  const request = (method: string, params: object): Promise<Reply> => {
    const id = next++;
    const reply = new Promise<Reply>((resolve) => waiting.set(id, resolve));
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    proc.stdin.flush();
    return reply;
  };
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "kill-rounds", version: "0" } });
  proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  return {
    proc,
    call: async (name, args) => {
      const r = await request("tools/call", { name, arguments: args });
      return { isError: r.result?.isError === true, ...r.result?.structuredContent };
    },
    logged: (event) => {
      const seen = logs.find((l) => l.event === event);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => logWaiters.push({ event, resolve }));
    },
    close: async () => {
      proc.stdin.end();
      await proc.exited;
    },
  };
}

const sha = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

/** `SIZE` bytes of text lines whose first line names the generation. */
function textOf(generation: number): Buffer {
  const head = `generation ${generation}\n`;
  const line = "the quick brown fox jumps over the lazy dog 0123456789\n";
  const body = line.repeat(Math.ceil(SIZE / line.length));
  return Buffer.from((head + body).slice(0, SIZE - 1) + "\n");
}

function binaryOf(round: number): Buffer {
  const b = Buffer.alloc(SIZE);
  for (let i = 0; i < b.length; i++) b[i] = (i * 131 + round * 7 + (i >> 13)) & 0xff;
  return b;
}

/** The kill points of one tool: the temp's write at eight offsets spread over the file, its fsync, the rename. */
const KILL_POINTS: { rule: FaultRule; published: boolean }[] = [
  ...Array.from({ length: 8 }, (_, i) => ({ rule: { op: "write", path: TEMPS, hold: true, once: true, min_offset: Math.floor((i * SIZE) / 8) } as FaultRule, published: false })),
  { rule: { op: "fsync", path: TEMPS, hold: true, once: true }, published: false },
  { rule: { op: "rename", path: TEMPS, hold: true, once: true }, published: true },
];

/**
 * The kill points one tool's rounds use. The stress lane: all ten for each tool (20 rounds). npm
 * test: the fsync and the rename for each, and the eight write offsets shared between the two
 * tools (even ones for edits, odd ones for uploads), so every point still runs (12 rounds).
 */
function pointsFor(tool: "edit_text_file" | "upload_binary_file"): typeof KILL_POINTS {
  if (STRESS) return KILL_POINTS;
  const parity = tool === "edit_text_file" ? 0 : 1;
  return KILL_POINTS.filter((p, i) => p.rule.op !== "write" || i % 2 === parity);
}
const ROUNDS = pointsFor("edit_text_file").length + pointsFor("upload_binary_file").length;

let base = "";
let ffs: FaultFs | null = null;
let toml = "";
let disk = "";
const started: Serve[] = [];

beforeAll(async () => {
  if (skip !== null) return;
  base = tempDir("sfs-kill-");
  ffs = await mountFaultFs(base);
  disk = path.join(ffs.backing, "w");
  fs.mkdirSync(disk);
  fs.writeFileSync(path.join(disk, "big.txt"), textOf(0));
  fs.writeFileSync(path.join(disk, "big.bin"), binaryOf(0));
  toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(
    toml,
    `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(path.join(ffs.mount, "w"))}\nread_only = false\nbinary_transfer_enabled = true\nmax_write_bytes = ${4 * SIZE}\n`,
  );
}, 60_000);

afterAll(async () => {
  for (const s of started) if (s.proc.exitCode === null) s.proc.kill(9);
  await ffs?.close();
}, 60_000);

async function serve(): Promise<Serve> {
  const s = await startServe(toml, base);
  started.push(s);
  return s;
}

async function revision(s: Serve, p: string): Promise<string> {
  return (await s.call("stat_file", { workdir: "w", path: p })).revision as string;
}

describe.skipIf(skip !== null)("SIGKILL in the middle of an overwrite", () => {
  test(`${ROUNDS} rounds (edit_text_file and upload_binary_file at 10 kill points: every point in npm test, every point for each tool in the stress lane): old or new bytes, exactly; the next serve's write leaves no temp`, async () => {
    const f = ffs!;
    let generation = 0;
    let round = 0;
    const outcomes: string[] = [];
    // Each round's serve starts while the round before it runs; its start-up pass may come before
    // or after that round's kill (it keeps a live writer's temp and removes a dead one's), and its
    // first write comes after the kill and must leave no temp either way.
    let upcoming = serve();
    for (const tool of ["edit_text_file", "upload_binary_file"] as const) {
      for (const point of pointsFor(tool)) {
        const s = await upcoming;
        upcoming = serve();
        // the new serve's first write in the directory: the last round's dead temp is gone after it
        const probe = await s.call("create_text_file", { workdir: "w", path: `probe-${round}.txt`, content: "probe\n" });
        expect(probe.isError).toBe(false);
        expect(tempsIn(disk)).toEqual([]);

        const target = tool === "edit_text_file" ? "big.txt" : "big.bin";
        const oldBytes = fs.readFileSync(path.join(disk, target));
        const newBytes = tool === "edit_text_file" ? textOf(generation + 1) : binaryOf(round + 1);
        const args =
          tool === "edit_text_file"
            ? { path: target, expected_revision: await revision(s, target), edits: [{ old_text: `generation ${generation}\n`, new_text: `generation ${generation + 1}\n` }] }
            : { path: target, expected_revision: await revision(s, target), overwrite: true, data_base64: newBytes.toString("base64") };
        await f.rules([point.rule]);
        void s.call(tool, { workdir: "w", ...args });
        const held = await f.nextHeld();
        expect(held.op).toBe(point.rule.op);
        // the one temp in the directory is this live serve's
        const temps = tempsIn(disk);
        expect(temps.length).toBe(1);
        expect(tempOwner(temps[0]!)?.pid).toBe(s.proc.pid);

        s.proc.kill(9);
        // a serve blocked in a FUSE request dies once the filesystem answers it
        expect(await f.release()).toBe(1);
        expect(await s.proc.exited).not.toBe(0);
        await f.rules([]);

        const now = sha(fs.readFileSync(path.join(disk, target)));
        expect([sha(oldBytes), sha(newBytes)]).toContain(now);
        expect(now).toBe(point.published ? sha(newBytes) : sha(oldBytes));
        // killed before the rename: its temp is left (unless the next serve's start-up pass,
        // already running, removed it); killed in the rename: the temp became the target
        const left = tempsIn(disk);
        expect(left.length).toBeLessThanOrEqual(point.published ? 0 : 1);
        for (const n of left) expect(tempOwner(n)?.pid).toBe(s.proc.pid);
        if (point.published && tool === "edit_text_file") generation++;
        outcomes.push(point.published ? "new" : "old");
        round++;
      }
    }
    expect(outcomes.filter((o) => o === "new").length).toBe(2);
    // and one last serve: its first write removes the last round's temp
    const last = await upcoming;
    expect((await last.call("create_text_file", { workdir: "w", path: "final.txt", content: "x" })).isError).toBe(false);
    expect(tempsIn(disk)).toEqual([]);
    await last.close();
  }, 300_000);

  test("a live serve's temp survives another serve's write and start-up sweep; its write then completes", async () => {
    const f = ffs!;
    const writer = await serve();
    const target = "big.bin";
    const newBytes = binaryOf(1000);
    await f.rules([{ op: "write", path: TEMPS, hold: true, once: true, min_offset: SIZE >> 1 }]);
    const answer = writer.call("upload_binary_file", {
      workdir: "w",
      path: target,
      overwrite: true,
      expected_revision: await revision(writer, target),
      data_base64: newBytes.toString("base64"),
    });
    await f.nextHeld();
    const [live] = tempsIn(disk);
    expect(tempOwner(live!)?.pid).toBe(writer.proc.pid);

    const other = await serve();
    expect((await other.call("create_text_file", { workdir: "w", path: "beside.txt", content: "x" })).isError).toBe(false);
    const sweep = await other.logged("temp_sweep");
    expect(sweep).toMatchObject({ workdirs: 1, removed: 0, kept: 1 });
    expect(tempsIn(disk)).toEqual([live!]);
    await other.close();

    expect(await f.release()).toBe(1);
    await f.rules([]);
    expect((await answer).isError).toBe(false);
    expect(sha(fs.readFileSync(path.join(disk, target)))).toBe(sha(newBytes));
    expect(tempsIn(disk)).toEqual([]);
    await writer.close();
  }, 60_000);
});
