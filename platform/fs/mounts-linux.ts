// Which mount a path lives on, from /proc/self/mountinfo: the longest mount point that is a
// prefix of the (symlink-free) path; among equal mount points the last listed, because a later
// mount stacks on top of an earlier one. Read-only is either the per-mount flag or the
// superblock flag (`mount -o remount,ro` sets one or the other).
import fs from "node:fs";
import path from "node:path";
import { isWithin } from "../paths.ts";

export interface MountFacts {
  mountPoint: string;
  fsType: string;
  readOnly: boolean;
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
function unescapeOctal(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

export function parseMountInfo(text: string): MountFacts[] {
  const out: MountFacts[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const fields = line.split(" ");
    const dash = fields.indexOf("-", 6);
    if (dash < 0 || fields.length < dash + 3) continue;
    const mountPoint = unescapeOctal(fields[4]!);
    const mountOpts = fields[5]!.split(",");
    const fsType = fields[dash + 1]!;
    const superOpts = (fields[dash + 3] ?? "").split(",");
    out.push({ mountPoint, fsType, readOnly: mountOpts.includes("ro") || superOpts.includes("ro") });
  }
  return out;
}

function covers(mountPoint: string, target: string): boolean {
  return isWithin(target, mountPoint, path.posix);
}

export function mountFor(target: string, mounts: readonly MountFacts[]): MountFacts | null {
  let best: MountFacts | null = null;
  for (const m of mounts) {
    if (!covers(m.mountPoint, target)) continue;
    if (best === null || m.mountPoint.length >= best.mountPoint.length) best = m;
  }
  return best;
}

export function linuxMountOf(realPath: string): MountFacts | null {
  let text: string;
  try {
    text = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return null;
  }
  return mountFor(realPath, parseMountInfo(text));
}
