// The table bench/targets.ts prints: one line per row, its figure against its target.
import type { Row } from "./target-rows.ts";

export const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;

function cell(row: Row): string[] {
  const o = row.outcome;
  const limit = row.target;
  const target = limit === null ? "none" : row.additive ? `≤ +${limit} ms` : `≤ ${limit.toFixed(1)}×`;
  // a row with no target of its own (1s, 6s) gets no verdict
  const verdict = (value: number) => (limit === null ? "" : value <= limit ? "met" : "MISSED");
  const rss = row.servePeakKiB === null ? "" : mib(row.servePeakKiB);
  if (o.kind === "none") return [row.id, row.label, row.baseline, "", "", "", target, o.why, rss];
  if (o.kind === "added") {
    return [row.id, row.label, row.baseline, o.ours_ms.toFixed(1), o.baseline_ms.toFixed(1), `${o.added_ms >= 0 ? "+" : ""}${o.added_ms.toFixed(1)} ms`, target, verdict(o.added_ms), rss];
  }
  const f = o.figure;
  return [row.id, row.label, row.baseline, f.ours_ms.toFixed(0), f.baseline_ms.toFixed(0), `${f.ratio.toFixed(2)}×`, target, verdict(f.ratio), rss];
}

export function printTable(rows: Row[]): void {
  const head = ["#", "row", "baseline", "ours ms", "base ms", "ratio", "target", "result", "serve peak"];
  const cells = [head, ...rows.map(cell)];
  const width = head.map((_, c) => Math.max(...cells.map((r) => r[c]!.length)));
  const right = new Set([3, 4, 5]);
  for (const r of cells) console.log(r.map((v, c) => (right.has(c) ? v.padStart(width[c]!) : v.padEnd(width[c]!))).join("  ").trimEnd());
}
