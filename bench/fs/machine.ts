// The machine line every fs benchmark prints next to its figures.
import fs from "node:fs";
import os from "node:os";

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
