// read_text_file tail_lines against the only way to reach the end of a log without it: a page at
// start_line = (line count − N + 1), which scans every byte before it. Both run against the
// COMPILED serve over MCP stdio, interleaved run by run in one session (same cache, same load);
// the log's line count is known to the bench, as it would not be to a caller.
//
// usage: bun build/compile.ts linux-x64 && bun bench/fs/tail.ts [size-MiB=256] [runs=5] [binary]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { machineLine } from "../lib/machine.ts";
import { openServe } from "../lib/serve-session.ts";

const MiB = 1024 * 1024;
const ROOT = path.resolve(import.meta.dir, "../..");
const SIZE_MIB = Number(process.argv[2] ?? 256);
const RUNS = Number(process.argv[3] ?? 5);
const BIN = path.resolve(process.argv[4] ?? path.join(ROOT, "dist/serverfs-linux-x64"));
const N = 200;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-tail-"));
  try {
    const dir = path.join(base, "w");
    fs.mkdirSync(dir);
    const fd = fs.openSync(path.join(dir, "app.log"), "w");
    let lines = 0;
    const chunkLines = 16_384;
    const chunk = Buffer.from(Array.from({ length: chunkLines }, (_, i) => `2026-12-01T00:00:00Z worker ${i % 97} handled request ${i}\n`).join(""));
    for (let written = 0; written < SIZE_MIB * MiB; written += chunk.length, lines += chunkLines) fs.writeSync(fd, chunk);
    fs.closeSync(fd);
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(dir)}\n`);
    console.log(machineLine());
    console.log(`binary: ${path.relative(ROOT, BIN)}; log: ${SIZE_MIB} MiB, ${lines} lines; last ${N} lines; ${RUNS} interleaved runs`);

    const s = await openServe(BIN, toml, base, "tail-bench");
    try {
      const tail: number[] = [];
      const page: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        let t0 = performance.now();
        const a = await s.call("read_text_file", { workdir: "w", path: "app.log", tail_lines: N });
        tail.push(performance.now() - t0);
        t0 = performance.now();
        const b = await s.call("read_text_file", { workdir: "w", path: "app.log", start_line: lines - N + 1, max_lines: N });
        page.push(performance.now() - t0);
        const ca = (a.structuredContent as { content: string }).content;
        const cb = (b.structuredContent as { content: string }).content;
        if (a.isError || b.isError || ca !== cb) throw new Error("the two reads disagree on the last lines");
      }
      console.log(`${"method".padEnd(36)} ${"median ms".padStart(10)}`);
      console.log(`${"page at start_line (baseline)".padEnd(36)} ${median(page).toFixed(1).padStart(10)}`);
      console.log(`${"tail_lines".padEnd(36)} ${median(tail).toFixed(1).padStart(10)}`);
      console.log(`baseline / tail_lines: ${(median(page) / median(tail)).toFixed(1)}×`);
    } finally {
      await s.close();
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

await main();
