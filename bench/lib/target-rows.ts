// The rows of bench/targets.ts: which benchmark fills each, with which arguments, and how a row's
// figure is read from that benchmark's RESULT line (bench/targets.ts documents the contract).
import fs from "node:fs";
import path from "node:path";
import type { Figure } from "./result.ts";

const ROOT = path.resolve(import.meta.dir, "../..");

/** What a row shows: a figure against its target, or why it has none. */
export type Outcome = { kind: "ratio"; figure: Figure } | { kind: "added"; ours_ms: number; baseline_ms: number; added_ms: number } | { kind: "none"; why: string };

export interface Row {
  id: string;
  label: string;
  baseline: string;
  /** null: a row shown to explain another (rows 1s and 6s), with no target of its own. */
  target: number | null;
  additive?: boolean;
  outcome: Outcome;
  servePeakKiB: number | null;
}

export interface Job {
  /** The rows this benchmark run fills (`rss` fills none: it only reports the Bridge's RSS). */
  rows: { id: string; label: string; baseline: string; target: number | null; additive?: boolean; pick: (r: Record<string, unknown>) => Outcome }[];
  script: string;
  args: string[];
  env: Record<string, string>;
  tree?: "search" | "find";
}

export const num = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/** The figure at `r[key]` (or r itself with no key), or why it is not one. */
function ratioAt(script: string, key: string | null): (r: Record<string, unknown>) => Outcome {
  return (r) => {
    const f = (key === null ? r : r[key]) as Record<string, unknown> | null | undefined;
    if (f === null || f === undefined || typeof f !== "object") return { kind: "none", why: `RESULT from ${script} has no ${key ?? "figure"}` };
    if (!num(f.ours_ms) || !num(f.baseline_ms)) return { kind: "none", why: `RESULT from ${script} lacks ours_ms or baseline_ms` };
    const ratio = num(f.ratio) ? f.ratio : f.ours_ms / f.baseline_ms;
    return { kind: "ratio", figure: { ours_ms: f.ours_ms, baseline_ms: f.baseline_ms, ratio } };
  };
}

function addedMs(script: string, busy: boolean): (r: Record<string, unknown>) => Outcome {
  return (r) => {
    if (!num(r.ours_ms) || !num(r.baseline_ms)) return { kind: "none", why: `RESULT from ${script} lacks ours_ms or baseline_ms` };
    if (busy && r.busy !== true) return { kind: "none", why: `RESULT from ${script} does not say busy: true (asked with --busy)` };
    return { kind: "added", ours_ms: r.ours_ms, baseline_ms: r.baseline_ms, added_ms: num(r.added_ms) ? r.added_ms : r.ours_ms - r.baseline_ms };
  };
}

export function jobs(o: { runs: number | null; quick: boolean }, bin: string): Job[] {
  const fileRuns = String(o.runs ?? (o.quick ? 3 : ""));
  // bench/fs/startup.ts measures against Node's server-filesystem, not the row's baseline: the
  // table names whichever baseline the script that ran uses.
  const coldScript = fs.existsSync(path.join(ROOT, "bench/startup/serve-cold.ts"));
  const startup = coldScript ? "bench/startup/serve-cold.ts" : "bench/fs/startup.ts";
  const startupBaseline = coldScript ? "Bun hello-world" : "server-filesystem";
  const acpIterations = String(o.runs ?? (o.quick ? 10 : 30));
  const regex = (id: string, label: string, pattern: string): Job => ({
    rows: [{ id, label, baseline: "rg -e", target: 1.5, pick: (r) => ratioAt("bench/fs/search-regex.ts", null)(((r.cases as unknown[]) ?? [])[0] as Record<string, unknown>) }],
    script: "bench/fs/search-regex.ts",
    args: [bin, ...(fileRuns ? [fileRuns] : [])],
    env: { REGEX_PATTERN: pattern },
    tree: "search",
  });
  const search = "bench/fs/search.ts";
  return [
    {
      rows: [
        { id: "1", label: "literal, no match, fresh serve, 1st call", baseline: "rg -F", target: 1.0, pick: ratioAt(search, "fresh") },
        // row 1 less its wait for the server's load: the first call sent once the full server is up
        { id: "1s", label: "  the same, sent once the server is up", baseline: "rg -F", target: null, pick: ratioAt(search, "settled") },
        { id: "2", label: "literal, no match, warm serve, 5th call", baseline: "rg -F", target: 0.8, pick: ratioAt(search, "warm") },
      ],
      script: search,
      args: fileRuns ? [fileRuns] : [],
      env: {},
      tree: "search",
    },
    {
      rows: [{ id: "3", label: "case-insensitive literal, warm", baseline: "rg -i -F", target: 1.0, pick: ratioAt(search, "warm") }],
      script: search,
      args: fileRuns ? [fileRuns] : [],
      env: { CASE_INSENSITIVE: "1", SEARCH_PHASES: "warm" },
      tree: "search",
    },
    regex("4", "regex [A-Z][a-z]+[0-9]{3}x, warm", "[A-Z][a-z]+[0-9]{3}x"),
    regex("5", "regex (\\w+\\s+){8}\\d{4}Z, warm", "(\\w+\\s+){8}\\d{4}Z"),
    {
      rows: [
        { id: "6", label: "repo, 60,000-file node_modules ignored, 1st call", baseline: "rg", target: 1.2, pick: ratioAt("bench/fs/ignore.ts", "first_call") },
        { id: "6s", label: "  the same, sent once the server is up", baseline: "rg", target: null, pick: ratioAt("bench/fs/ignore.ts", "settled_call") },
      ],
      script: "bench/fs/ignore.ts",
      args: fileRuns ? [fileRuns] : [],
      env: { IGNORE_PHASES: "first" },
    },
    {
      rows: [{ id: "7", label: "find_files, 200,000 entries", baseline: "find -name", target: 0.8, pick: ratioAt("bench/fs/find.ts", null) }],
      script: "bench/fs/find.ts",
      args: fileRuns ? [fileRuns] : [],
      env: {},
      tree: "find",
    },
    {
      rows: [
        { id: "8", label: "cold start to initialize + tools/list", baseline: startupBaseline, target: 1.3, pick: ratioAt(startup, null) },
        // serve-cold.ts also starts serve from a config file, which the flags' start does not read or parse
        ...(coldScript ? [{ id: "8b", label: "cold start, serve --config FILE", baseline: startupBaseline, target: 1.3, pick: ratioAt(startup, "config") }] : []),
      ],
      script: startup,
      args: o.runs !== null ? [String(o.runs)] : o.quick ? ["10"] : [],
      env: {},
    },
    {
      rows: [{ id: "9a", label: "ACP submit→done p50, quiet", baseline: "bare ACP client", target: 5, additive: true, pick: addedMs("bench/acp/overhead.ts", false) }],
      script: "bench/acp/overhead.ts",
      args: [acpIterations],
      env: {},
    },
    {
      rows: [{ id: "9b", label: "ACP submit→done p50, 1 busy loop/core", baseline: "bare ACP client", target: 5, additive: true, pick: addedMs("bench/acp/overhead.ts", true) }],
      script: "bench/acp/overhead.ts",
      args: [acpIterations, "--busy"],
      env: { BUSY: "1" },
    },
    {
      rows: [],
      script: "bench/bridge/rss.bench.ts",
      args: [],
      env: o.quick ? { ROUNDS: "1", CHURN: "50" } : {},
    },
  ];
}

/** `--only 9` picks both of row 9's runs (9a quiet, 9b busy); `--only 9b` one of them (rows 8b, 1s and 6s come with 8, 1 and 6). */
export const selected = (o: { only: Set<string> | null }, j: Job): boolean =>
  o.only === null || (j.rows.length === 0 ? o.only.has("rss") : j.rows.some((r) => o.only!.has(r.id) || o.only!.has(r.id.replace(/[abs]$/, ""))));
