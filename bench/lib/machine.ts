// Every benchmark prints the machine it ran on, so a figure is never read without its context.
import { cpus, release, totalmem } from "node:os";

export function machineLine(): string {
  const cpu = cpus()[0]?.model ?? "unknown cpu";
  const mem = `${Math.round(totalmem() / 2 ** 30)} GiB`;
  return `machine: ${process.platform}-${process.arch}, ${cpus().length} cores (${cpu}), ${mem} RAM, kernel ${release()}, bun ${Bun.version}`;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

export function fmtMs(ms: number): string {
  return `${ms.toFixed(2)} ms`;
}
