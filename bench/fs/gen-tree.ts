// Generates the benchmark trees under a temp dir (or the directory given):
//   search tree: >= 20,000 files, >= 200 MB, mostly UTF-8 text, some binary (NUL), some with
//                invalid UTF-8 lines, a few multi-MB files;
//   find tree:   >= 200,000 entries (directories + empty files).
// Content is deterministic (seeded PRNG), so every run measures the same bytes.
//
// usage: bun bench/fs/gen-tree.ts search|find [dir]

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua function return const let value index buffer stream render config workdir policy revision".split(" ");

/** A pool of text lines to slice file contents from (fast to generate, realistic line lengths). */
function textPool(bytes: number, rnd: () => number): Buffer {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const n = 3 + Math.floor(rnd() * 14);
    const words: string[] = [];
    for (let i = 0; i < n; i++) words.push(WORDS[Math.floor(rnd() * WORDS.length)] as string);
    const line = `${"  ".repeat(Math.floor(rnd() * 4))}${words.join(" ")}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join(""), "utf8");
}

export interface TreeStats {
  files: number;
  dirs: number;
  bytes: number;
  binary: number;
  invalidUtf8: number;
}

export function generateSearchTree(root: string, opts: { files?: number; seed?: number } = {}): TreeStats {
  const files = opts.files ?? 20_000;
  const rnd = prng(opts.seed ?? 42);
  const pool = textPool(8 * 1024 * 1024, rnd);
  const stats: TreeStats = { files: 0, dirs: 0, bytes: 0, binary: 0, invalidUtf8: 0 };
  const perDir = 100;
  for (let i = 0; i < files; i++) {
    const d = path.join(root, `pkg${Math.floor(i / (perDir * 20))}`, `mod${Math.floor(i / perDir) % 20}`);
    if (i % perDir === 0) {
      fs.mkdirSync(d, { recursive: true });
      stats.dirs++;
    }
    let content: Buffer;
    const kind = i % 50;
    if (i < 12) {
      // a few large files: 6 MB of text each
      content = Buffer.from(pool.subarray(0, 6 * 1024 * 1024));
    } else if (kind === 7) {
      content = Buffer.alloc(4096 + Math.floor(rnd() * 16384));
      for (let k = 0; k < content.length; k++) content[k] = Math.floor(rnd() * 256);
      content[100] = 0;
      stats.binary++;
    } else {
      const size = 2048 + Math.floor(rnd() * 14000);
      const start = Math.floor(rnd() * (pool.length - size));
      content = Buffer.from(pool.subarray(start, start + size));
      if (kind === 13) {
        content[Math.floor(content.length / 2)] = 0xff; // an invalid UTF-8 byte mid-file
        stats.invalidUtf8++;
      }
    }
    fs.writeFileSync(path.join(d, `file${i}.${i % 3 === 0 ? "ts" : i % 3 === 1 ? "md" : "txt"}`), content);
    stats.files++;
    stats.bytes += content.length;
  }
  return stats;
}

export function generateFindTree(root: string, opts: { entries?: number } = {}): TreeStats {
  const target = opts.entries ?? 200_000;
  const stats: TreeStats = { files: 0, dirs: 0, bytes: 0, binary: 0, invalidUtf8: 0 };
  const perDir = 99;
  let entries = 0;
  for (let d = 0; entries < target; d++) {
    const dir = path.join(root, `a${d % 40}`, `b${Math.floor(d / 40) % 50}`, `c${d}`);
    fs.mkdirSync(dir, { recursive: true });
    stats.dirs++;
    entries++;
    for (let f = 0; f < perDir && entries < target; f++) {
      fs.closeSync(fs.openSync(path.join(dir, `f${f}.${f % 4 === 0 ? "rs" : f % 4 === 1 ? "py" : f % 4 === 2 ? "json" : "txt"}`), "w"));
      stats.files++;
      entries++;
    }
  }
  return stats;
}

/** Regular files and their bytes under `root` (an existing tree's size, for the benchmarks' tree line). */
export function treeSize(root: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        files++;
        bytes += fs.statSync(p).size;
      }
    }
  };
  walk(root);
  return { files, bytes };
}

/** The machine line every fs benchmark prints next to its figures. */
export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown cpu";
  let fsType = "";
  try {
    fsType = fs.readFileSync("/proc/mounts", "utf8").split("\n").find((l) => l.split(" ")[1] === "/")?.split(" ")[2] ?? "";
  } catch {
    // not Linux
  }
  const load = os.loadavg().map((x) => x.toFixed(2)).join(" ");
  return `machine: ${cpu}, ${os.cpus().length} cores, ${os.type()} ${os.release()}, root fs ${fsType || "?"}, bun ${Bun.version}, load average ${load}`;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

if (import.meta.main) {
  const kind = process.argv[2];
  const dir = process.argv[3] ?? fs.mkdtempSync(path.join(os.tmpdir(), `serverfs-bench-${kind}-`));
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const stats = kind === "find" ? generateFindTree(dir) : kind === "search" ? generateSearchTree(dir) : null;
  if (stats === null) {
    console.error("usage: bun bench/fs/gen-tree.ts search|find [dir]");
    process.exit(2);
  }
  console.log(JSON.stringify({ dir, ...stats, seconds: +((performance.now() - t0) / 1000).toFixed(1) }));
}
