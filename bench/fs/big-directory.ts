// Peak RSS of the COMPILED `serverfs serve` when one directory of a workdir holds 300 000 entries,
// sent as a host sends them (SDK client, MCP over stdio): list_directory (first page, the deepest
// page max_walk_entries allows, and a page past it, refused), find_files and search_text over
// that directory, and directory_tree over it. Each scenario runs in a fresh serve process, because VmHWM only ever grows;
// the baseline is an idle serve after initialize + tools/list, and a listing of a 10-entry
// directory is shown as the cost of a first tool call, both measured in the same run. Every peak
// must stay at or below 120 MB: the script exits 1 otherwise.
//
// usage: bun build/compile.ts linux-x64 && bun bench/fs/big-directory.ts [path-to-binary]
//        BIG_DIR_ENTRIES=<n> changes the directory's size (default 300 000).

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULT_LIMITS } from "../../src/config/defaults.ts";
import { machineLine } from "../lib/machine.ts";
import { openServe, vmHwmKiB } from "../lib/serve-session.ts";

const LIMIT_MB = 120;
const ROOT = path.resolve(import.meta.dir, "../..");
const BIN = path.resolve(process.argv[2] ?? path.join(ROOT, "dist/serverfs-linux-x64"));
const ENTRIES = Number(process.env.BIG_DIR_ENTRIES ?? 300_000);
const MAX_WALK = DEFAULT_LIMITS.max_walk_entries;

function outcome(r: CallToolResult): string {
  if (r.isError) return (r.structuredContent as { code: string }).code;
  const s = r.structuredContent as { returned?: number; truncated?: boolean; has_more?: boolean };
  return `ok ${s.returned}${s.truncated ? " trunc" : ""}${s.has_more ? " more" : ""}`;
}

/** Empty files with names long enough to matter (23 bytes), created in name order. */
function buildTree(dir: string): void {
  fs.mkdirSync(path.join(dir, "small"), { recursive: true });
  for (let i = 0; i < 10; i++) fs.closeSync(fs.openSync(path.join(dir, "small", `f${i}.txt`), "w"));
  const big = path.join(dir, "big");
  fs.mkdirSync(big);
  // tmpfs lists newest first: every name read is then smaller than all before it, the worst
  // case for a bounded selection (each one enters the candidates).
  for (let i = 0; i < ENTRIES; i++) fs.closeSync(fs.openSync(path.join(big, `file-number-${String(i).padStart(7, "0")}.txt`), "w"));
}

const FAR = MAX_WALK - 500;
const SCENARIOS: { name: string; tool: string; args: Record<string, unknown> }[] = [
  { name: "list_directory: 10 entries (first call)", tool: "list_directory", args: { workdir: "w", path: "small" } },
  { name: "list_directory: first page", tool: "list_directory", args: { workdir: "w", path: "big" } },
  { name: `list_directory: offset ${FAR}, limit 500`, tool: "list_directory", args: { workdir: "w", path: "big", offset: FAR, limit: 500 } },
  { name: `list_directory: offset ${ENTRIES - 10} (too deep)`, tool: "list_directory", args: { workdir: "w", path: "big", offset: ENTRIES - 10 } },
  { name: "find_files: *.none", tool: "find_files", args: { workdir: "w", path: "big", pattern: "*.none" } },
  { name: "search_text: absent query", tool: "search_text", args: { workdir: "w", path: "big", query: "zq-no-such-token" } },
  { name: "directory_tree: the big directory", tool: "directory_tree", args: { workdir: "w", path: "big" } },
  { name: "directory_tree: the root, max_depth 10", tool: "directory_tree", args: { workdir: "w", max_depth: 10 } },
];

async function main(): Promise<void> {
  if (!fs.existsSync(BIN)) throw new Error(`no compiled binary at ${BIN}: run bun build/compile.ts linux-x64 first`);
  if (process.platform !== "linux") throw new Error("VmHWM comes from /proc: Linux only");
  // tmpfs when there is one: creating 300 000 files on a disk takes much longer
  const parent = fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir();
  const base = fs.mkdtempSync(path.join(parent, "serverfs-bench-bigdir-"));
  try {
    const dir = path.join(base, "w");
    const t0 = performance.now();
    buildTree(dir);
    const toml = path.join(base, "serverfs.toml");
    fs.writeFileSync(toml, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(dir)}\n`);
    console.log(machineLine());
    console.log(`binary: ${path.relative(ROOT, BIN)}; ${ENTRIES} entries in one directory (${parent}, built in ${((performance.now() - t0) / 1000).toFixed(1)} s); limits: serverfs defaults (max_walk_entries ${MAX_WALK})`);

    const idle = await openServe(BIN, toml, base, "big-directory-bench");
    const baseline = vmHwmKiB(idle.pid) / 1024;
    await idle.close();
    console.log(`baseline (idle serve after initialize + tools/list): ${baseline.toFixed(1)} MB VmHWM`);
    console.log("");
    console.log(`${"scenario".padEnd(44)} ${"result".padEnd(22)} ${"time s".padStart(7)} ${"peak MB".padStart(8)} ${"+MB".padStart(7)} ${"×base".padStart(6)}  ≤${LIMIT_MB}`);
    let failed = 0;
    for (const sc of SCENARIOS) {
      const s = await openServe(BIN, toml, base, "big-directory-bench");
      let result: string;
      const t1 = performance.now();
      try {
        result = outcome(await s.call(sc.tool, sc.args));
        if ((await s.call("list_workdirs", {})).isError) result += " (then unresponsive)";
      } catch (err) {
        result = `threw: ${(err as Error).message.slice(0, 30)}`;
      }
      const secs = (performance.now() - t1) / 1000;
      const peak = vmHwmKiB(s.pid) / 1024;
      await s.close();
      const ok = peak <= LIMIT_MB && !result.startsWith("threw") && !result.includes("unresponsive");
      if (!ok) failed++;
      console.log(
        `${sc.name.padEnd(44)} ${result.padEnd(22)} ${secs.toFixed(2).padStart(7)} ${peak.toFixed(1).padStart(8)} ${(peak - baseline).toFixed(1).padStart(7)} ${(peak / baseline).toFixed(2).padStart(6)}  ${ok ? "ok" : "FAIL"}`,
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
