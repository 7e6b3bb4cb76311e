// Peak RSS of the COMPILED `serverfs serve` under the worst single requests we can build, sent as
// a host sends them (SDK client, MCP over stdio). Each scenario runs in a fresh serve process,
// because VmHWM (from /proc/<pid>/status) only ever grows; the baseline is an idle serve after
// initialize + tools/list, measured in the same run. Every peak must stay at or below 120 MB:
// the script exits 1 otherwise.
//
// usage: bun build/compile.ts linux-x64 && bun bench/fs/peak-rss.ts [path-to-binary]
//        PEAK_RSS_ONLY=<substring> runs only the scenarios whose name contains it.

import { type CallToolResult, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildDiffTree, DIFF_CASES } from "../lib/diff-cases.ts";
import { machineLine } from "../lib/machine.ts";
import { openServe, vmHwmKiB, type ServeSession as Session } from "../lib/serve-session.ts";

const LIMIT_MB = 120;
const MiB = 1024 * 1024;
const ROOT = path.resolve(import.meta.dir, "../..");
const BIN = path.resolve(process.argv[2] ?? path.join(ROOT, "dist/serverfs-linux-x64"));
const QUERY = "needle";

/** A refusal at the JSON-RPC level (an SDK McpError) as its code, e.g. `rpc -32600`. */
async function rpcOutcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "answered";
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === "number") return `rpc ${code}`;
    throw err;
  }
}

/** The largest frame this configuration accepts (binary transfer on, 8 MiB): base64 doubled plus 1 MiB. */
const FRAME_CAP = 2 * 4 * Math.ceil((8 * MiB) / 3) + MiB;

function outcome(r: CallToolResult): string {
  if (r.isError) return (r.structuredContent as { code: string }).code;
  return "ok";
}

// ---------------------------------------------------------------------------------------------
// Fixtures: one workdir with everything the scenarios need, written once.

function buildTree(dir: string): void {
  fs.mkdirSync(path.join(dir, "search-long"), { recursive: true });
  fs.mkdirSync(path.join(dir, "search-many"), { recursive: true });
  fs.mkdirSync(path.join(dir, "wide"), { recursive: true });
  // 1 MiB of 'a': every byte is an occurrence for the max-count edits.
  fs.writeFileSync(path.join(dir, "ones.txt"), Buffer.alloc(MiB, "a"));
  // Half a MiB of 'a': the original 2 GB request (4 KB replacement × 524 288).
  fs.writeFileSync(path.join(dir, "half.txt"), Buffer.alloc(512 * 1024, "a"));
  fs.writeFileSync(path.join(dir, "one.txt"), "a");
  // Control characters are 6 bytes each once JSON-escaped: the largest text answer per read byte.
  const ctl = Buffer.alloc(512 * 1024 - 1, 0x01);
  fs.writeFileSync(path.join(dir, "ctl.txt"), Buffer.concat([ctl, Buffer.from("\n")]));
  // Long non-ASCII lines with a match every KiB (case-insensitive search folds whole lines).
  const unit = `${"ÄÖÜ".repeat(100)}${"x".repeat(700)}${QUERY.toUpperCase()}${"y".repeat(18)}`;
  const longLine = `${unit.repeat(4096)}\n`; // ~4.4 MB, longer than the scanner's 1 MiB buffer
  for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(dir, "search-long", `l${i}.txt`), longLine.repeat(2));
  // Lines just under the scanner's buffer go through the per-line (not the streaming) fold.
  fs.mkdirSync(path.join(dir, "search-wide"), { recursive: true });
  const wideLine = `${unit.repeat(800)}\n`; // ~0.9 MB
  for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(dir, "search-wide", `w${i}.txt`), wideLine.repeat(4));
  // Many files, every line a match with 3 KiB of text: results hit the cap on each match's text.
  const matchLine = `${QUERY} ${"z".repeat(3000)}\n`;
  for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(dir, "search-many", `m${i}.txt`), matchLine.repeat(50));
  // Context: a match every 21 lines of ~3 KiB non-ASCII text, so context_lines = 10 returns
  // 100 matches × 21 capped lines (the largest context answer).
  fs.mkdirSync(path.join(dir, "search-context"), { recursive: true });
  const ctxLines = Array.from({ length: 21 * 200 }, (_, i) => `${i % 21 === 10 ? QUERY : "ctx"} ${"é".repeat(1500)}${i}`);
  fs.writeFileSync(path.join(dir, "search-context", "c.txt"), `${ctxLines.join("\n")}\n`);
  // Half-MiB files of 16 KiB lines of a and b: the regex DFA blow-up (states explode on a[ab]{20}).
  fs.mkdirSync(path.join(dir, "search-ab"), { recursive: true });
  let seed = 17;
  for (let i = 0; i < 4; i++) {
    const ab = Buffer.alloc(32 * (16 * 1024 + 1));
    for (let j = 0; j < ab.length; j++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      ab[j] = j % (16 * 1024 + 1) === 16 * 1024 ? 10 : seed & 0x10000 ? 97 : 98;
    }
    fs.writeFileSync(path.join(dir, "search-ab", `ab${i}.txt`), ab);
  }
  // A wide directory for list_directory / find_files.
  for (let i = 0; i < 50_000; i++) fs.writeFileSync(path.join(dir, "wide", `entry-with-a-longish-name-${String(i).padStart(6, "0")}.txt`), "");
  // 32 files (max_files_per_read) of control characters for read_multiple_files: one shared budget.
  fs.mkdirSync(path.join(dir, "many-ctl"), { recursive: true });
  for (let i = 0; i < 32; i++) fs.writeFileSync(path.join(dir, "many-ctl", `c${i}.txt`), Buffer.concat([ctl, Buffer.from("\n")]));
  // A 256 MiB log for tail_lines (only its end may be read).
  const logFd = fs.openSync(path.join(dir, "big.log"), "w");
  const logChunk = Buffer.from(Array.from({ length: 16_384 }, (_, i) => `2026-12-01T00:00:00Z worker ${i % 97} event ${i}\n`).join(""));
  for (let written = 0; written < 256 * MiB; written += logChunk.length) fs.writeSync(logFd, logChunk);
  fs.closeSync(logFd);
  // The largest image read_media_file serves with the default max_media_bytes (5 MiB): a real
  // PNG (test/fixtures/media, made by ImageMagick) padded after its end, so the strict sniffer
  // takes it for what it is.
  const png = fs.readFileSync(path.join(ROOT, "test/fixtures/media/image.png"));
  fs.writeFileSync(path.join(dir, "max.png"), Buffer.concat([png, Buffer.alloc(5 * MiB - png.length, 0xa5)]));
  // The largest download the default limit allows.
  fs.writeFileSync(path.join(dir, "max.bin"), Buffer.alloc(8 * MiB, 0xa5));
  buildDiffTree(path.join(dir, "diff"));
}

const DIFF_SCENARIOS: Scenario[] = DIFF_CASES.map((c) => ({
  name: `diff: ${c.name}`,
  run: async (s) => {
    const p = `diff/${c.file}`;
    const r = await s.call("edit_text_file", { workdir: "w", path: p, expected_revision: await revision(s, p), edits: c.edits, dry_run: c.dryRun });
    return r.isError ? outcome(r) : (r.structuredContent as { diff_truncated: boolean }).diff_truncated ? "ok, truncated" : "ok, diff";
  },
}));

type Scenario = { name: string; run: (s: Session, dir: string) => Promise<string> };

async function revision(s: Session, p: string): Promise<string> {
  return (((await s.call("stat_file", { workdir: "w", path: p })).structuredContent ?? {}) as { revision: string }).revision;
}

const alternating = (n: number, count: number) =>
  Array.from({ length: n }, (_, i) => ({ old_text: i % 2 === 0 ? "a" : "b", new_text: i % 2 === 0 ? "b" : "a", expected_count: count }));

const SCENARIOS: Scenario[] = [
  {
    name: "edit: 4 KB × 524288 (refused)",
    run: async (s) => outcome(await s.call("edit_text_file", { workdir: "w", path: "half.txt", expected_revision: await revision(s, "half.txt"), edits: [{ old_text: "a", new_text: "b".repeat(4000), expected_count: 524_288 }] })),
  },
  {
    name: "edit: 50 doubling edits (refused)",
    run: async (s) =>
      outcome(await s.call("edit_text_file", { workdir: "w", path: "one.txt", expected_revision: await revision(s, "one.txt"), edits: Array.from({ length: 50 }, (_, i) => ({ old_text: "a", new_text: "aa", expected_count: 2 ** i })) })),
  },
  {
    name: "multi-edit: 50 × 20 KB × MAX_SAFE count (refused)",
    run: async (s) =>
      outcome(await s.call("edit_text_file", { workdir: "w", path: "ones.txt", expected_revision: await revision(s, "ones.txt"), edits: Array.from({ length: 50 }, () => ({ old_text: "a", new_text: "日".repeat(6800), expected_count: Number.MAX_SAFE_INTEGER })) })),
  },
  {
    name: "multi-edit: 50 × 1 Mi replacements (legal)",
    run: async (s) => outcome(await s.call("edit_text_file", { workdir: "w", path: "ones.txt", expected_revision: await revision(s, "ones.txt"), edits: alternating(50, MiB) })),
  },
  {
    name: "edit: 1 MiB file → 1 MiB max-size replacement (legal)",
    run: async (s, dir) => {
      fs.writeFileSync(path.join(dir, "swap.txt"), Buffer.alloc(512 * 1024, "q"));
      const old = "q".repeat(512 * 1024);
      // 174 762 × "日" is 524 286 bytes: old + new stay within the 1 MiB request limit.
      return outcome(await s.call("edit_text_file", { workdir: "w", path: "swap.txt", expected_revision: await revision(s, "swap.txt"), edits: [{ old_text: old, new_text: "日".repeat(174_762) }] }));
    },
  },
  {
    name: "search: long non-ASCII lines, case-insensitive",
    run: async (s) => outcome(await s.call("search_text", { workdir: "w", path: "search-long", query: QUERY, case_sensitive: false, limit: 100 })),
  },
  {
    name: "search: 0.9 MB non-ASCII lines, case-insensitive",
    run: async (s) => outcome(await s.call("search_text", { workdir: "w", path: "search-wide", query: "NO-SUCH-token", case_sensitive: false, limit: 100 })),
  },
  {
    name: "search: many 3 KiB matching lines",
    run: async (s) => outcome(await s.call("search_text", { workdir: "w", path: "search-many", query: QUERY, limit: 100 })),
  },
  {
    name: "search: regex, context_lines 10, 100 matches of 21 capped lines",
    run: async (s) => outcome(await s.call("search_text", { workdir: "w", path: "search-context", query: `^${QUERY}\\b`, regex: true, context_lines: 10, limit: 100 })),
  },
  {
    name: "search: regex, case-insensitive, 0.9 MB lines (over the 64 KiB regex bound)",
    run: async (s) => outcome(await s.call("search_text", { workdir: "w", path: "search-wide", query: "NO-SUCH-t\\w+", regex: true, case_sensitive: false, limit: 100 })),
  },
  {
    name: "search: regex DFA blow-up a[ab]{20}[^ab], 2 MiB of two-letter lines",
    run: async (s) => outcome(await s.call("search_text", { workdir: "w", path: "search-ab", query: "a[ab]{20}[^ab]", regex: true, limit: 100 })),
  },
  {
    name: "search: two regex DFA blow-ups at once, and a 904-instruction pattern",
    run: async (s) => {
      const calls = ["a[ab]{20}[^ab]", "b[ab]{12}a[ab]{12}[^ab]", "a[ab]{900}[^ab]"].map((query) => s.call("search_text", { workdir: "w", path: "search-ab", query, regex: true, limit: 100 }));
      return (await Promise.all(calls)).map(outcome).join(", ");
    },
  },
  {
    name: "read: 512 KiB of control characters",
    run: async (s) => outcome(await s.call("read_text_file", { workdir: "w", path: "ctl.txt", max_lines: 500 })),
  },
  {
    name: "resource read: 512 KiB of control characters",
    run: async (s) => {
      const r = await s.client.readResource({ uri: "serverfs://w/ctl.txt" });
      return r.contents.length === 1 ? "ok" : "unexpected";
    },
  },
  {
    name: "read: read_multiple_files, 32 × 512 KiB control chars",
    run: async (s) => outcome(await s.call("read_multiple_files", { workdir: "w", paths: Array.from({ length: 32 }, (_, i) => `many-ctl/c${i}.txt`), max_lines: 500 })),
  },
  {
    name: "read: tail_lines 500 of a 256 MiB log",
    run: async (s) => outcome(await s.call("read_text_file", { workdir: "w", path: "big.log", tail_lines: 500 })),
  },
  {
    name: "read: read_media_file, 5 MiB image",
    run: async (s) => outcome(await s.call("read_media_file", { workdir: "w", path: "max.png" })),
  },
  {
    // Once climbed to ~148-195 MB: each read's garbage (file bytes, base64, the SDK's atob copy,
    // written pieces) piled up until the allocation-paced collector ran.
    name: "read: read_media_file, 20 × 5 MiB image in a row",
    run: async (s) => {
      const results = new Set<string>();
      for (let i = 0; i < 20; i++) results.add(outcome(await s.call("read_media_file", { workdir: "w", path: "max.png" })));
      return [...results].join(",");
    },
  },
  {
    // Once 215 MB: every answer's base64 was alive until its turn on stdout. Now one at a time.
    name: "read: read_media_file, 10 × 5 MiB image at once",
    run: async (s) => {
      const results = await Promise.all(Array.from({ length: 10 }, () => s.call("read_media_file", { workdir: "w", path: "max.png" })));
      return [...new Set(results.map(outcome))].join(",");
    },
  },
  {
    name: "download: 6 × 8 MiB binary at once",
    run: async (s) => {
      const results = await Promise.all(Array.from({ length: 6 }, () => s.call("download_binary_file", { workdir: "w", path: "max.bin" })));
      return [...new Set(results.map(outcome))].join(",");
    },
  },
  {
    name: "list_directory: 50 000 entries, last page",
    run: async (s) => outcome(await s.call("list_directory", { workdir: "w", path: "wide", offset: 49_900, limit: 500 })),
  },
  {
    name: "find_files: ** over 50 000 entries",
    run: async (s) => outcome(await s.call("find_files", { workdir: "w", pattern: "**", limit: 100 })),
  },
  {
    name: "download: 8 MiB binary",
    run: async (s) => outcome(await s.call("download_binary_file", { workdir: "w", path: "max.bin" })),
  },
  {
    // One frame just under the cap made of tiny values: JSON.parse of it once built millions of
    // objects (370-760 MB). serve refuses it from its bytes, before anything is parsed.
    name: "frame: 23 MB of {} in tool arguments (refused)",
    run: (s) => rpcOutcome(s.client.callTool({ name: "list_workdirs", arguments: { x: new Array(Math.floor((FRAME_CAP - 4096) / 3)).fill({}) } }, undefined, { timeout: 300_000 })),
  },
  {
    name: "frame: 23 MB of \"\" in _meta (refused)",
    run: (s) => rpcOutcome(s.client.request({ method: "tools/list", params: { _meta: { x: new Array(Math.floor((FRAME_CAP - 4096) / 3)).fill("") } } } as never, ListToolsResultSchema, { timeout: 300_000 })),
  },
  {
    name: "upload: 8 MiB overwrite",
    run: async (s) =>
      outcome(await s.call("upload_binary_file", { workdir: "w", path: "max.bin", data_base64: Buffer.alloc(8 * MiB, 0x5a).toString("base64"), overwrite: true, expected_revision: await revision(s, "max.bin") })),
  },
  ...DIFF_SCENARIOS,
];

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  if (process.platform !== "linux") throw new Error("VmHWM comes from /proc: Linux only");
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-bench-rss-"));
  try {
    const dir = path.join(base, "w");
    fs.mkdirSync(dir);
    buildTree(dir);
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(dir)}\nread_only = false\nbinary_transfer_enabled = true\n`);
    console.log(machineLine());
    console.log(`binary: ${path.relative(ROOT, BIN)}; limits: serverfs defaults (max_write_bytes 1 MiB, max_read_bytes 512 KiB, max_binary_transfer_bytes 8 MiB)`);

    const idle = await openServe(BIN, toml, base, "peak-rss-bench");
    const baseline = vmHwmKiB(idle.pid) / 1024;
    await idle.close();
    console.log(`baseline (idle serve after initialize + tools/list): ${baseline.toFixed(1)} MB VmHWM`);
    console.log("");
    console.log(`${"scenario".padEnd(54)} ${"result".padEnd(16)} ${"peak MB".padStart(8)} ${"+MB".padStart(7)} ${"×base".padStart(6)}  ≤${LIMIT_MB}`);

    let failed = 0;
    const only = process.env.PEAK_RSS_ONLY;
    for (const sc of SCENARIOS.filter((x) => only === undefined || x.name.includes(only))) {
      const s = await openServe(BIN, toml, base, "peak-rss-bench");
      let result: string;
      try {
        result = await sc.run(s, dir);
        // The server must still answer afterwards.
        const again = await s.call("list_workdirs", {});
        if (again.isError) result += " (then unresponsive)";
      } catch (err) {
        result = `threw: ${(err as Error).message.slice(0, 40)}`;
      }
      const peak = vmHwmKiB(s.pid) / 1024;
      await s.close();
      const okPeak = peak <= LIMIT_MB && !result.startsWith("threw") && !result.includes("unresponsive");
      if (!okPeak) failed++;
      console.log(
        `${sc.name.padEnd(54)} ${result.padEnd(16)} ${peak.toFixed(1).padStart(8)} ${(peak - baseline).toFixed(1).padStart(7)} ${(peak / baseline).toFixed(2).padStart(6)}  ${okPeak ? "ok" : "FAIL"}`,
      );
    }
    console.log("");
    console.log(failed === 0 ? `all ${SCENARIOS.length} scenarios peaked at or below ${LIMIT_MB} MB` : `${failed} scenario(s) above ${LIMIT_MB} MB or failed`);
    process.exitCode = failed === 0 ? 0 : 1;
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

await main();
