// edit_text_file's diff: the costliest inputs inside its bounds and just past them (docs/tools.md,
// `edit_text_file`), shared by bench/fs/peak-rss.ts (memory) and bench/fs/edit-diff.ts (time).
// Each case is one edit of a file buildDiffTree writes; every file but short-real.txt is only
// dry-run, so a case can run any number of times.
import fs from "node:fs";
import path from "node:path";

const MiB = 1024 * 1024;

/** Just under 1 MiB (max_write_bytes) of 8-byte lines, `l000000` … `l131070`: the most lines a file can hold. */
export const SHORT_LINES = Array.from({ length: MiB / 8 - 1 }, (_, i) => `l${String(i).padStart(6, "0")}\n`);

/** `SHORT_LINES` with every `step`-th of `count` lines from line 50 000 starting with M instead of l. */
const marked = (count: number, step: number) => SHORT_LINES.map((l, i) => (i >= 50_000 && (i - 50_000) % step === 0 && (i - 50_000) / step < count ? `M${l.slice(1)}` : l)).join("");

/** A window of exactly 1 MiB (old and new sides together): one long line between two changed short lines. */
function wideText(): string {
  const short = "s0\ns1\ns2\ns3\n";
  const windowOf = (long: string) => `s1\ns2\ns3\nCHANGE-1\n${short}${long}${short}CHANGE-2\ns0\ns1\ns2\n`;
  const long = `${"L".repeat(MiB / 2 - Buffer.byteLength(windowOf("")) - 1)}\n`;
  return `head\n${short}CHANGE-1\n${short}${long}${short}CHANGE-2\n${short}tail\n`;
}

export function buildDiffTree(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "short.txt"), SHORT_LINES.join(""));
  fs.writeFileSync(path.join(dir, "short-real.txt"), SHORT_LINES.join(""));
  fs.writeFileSync(path.join(dir, "small.txt"), Array.from({ length: 50 }, (_, i) => `line ${i}\n`).join(""));
  // 210 marked lines, one every 47, in a window of ~19 700 lines: ~98 000 comparisons, just under
  // the comparison bound.
  fs.writeFileSync(path.join(dir, "marked-under.txt"), marked(210, 47));
  // 499 marked lines, one every 20: 998 line insertions and deletions (the bound is 1000) in a
  // window of ~20 000 lines (its bound); the comparison bound stops it.
  fs.writeFileSync(path.join(dir, "marked-over.txt"), marked(499, 20));
  // A 3-line alphabet: Myers slides furthest per step, the most comparisons per changed line.
  fs.writeFileSync(path.join(dir, "alphabet.txt"), Array.from({ length: 3000 }, (_, i) => (i % 40 === 0 ? "Y\n" : `l${i % 3}\n`)).join(""));
  fs.writeFileSync(path.join(dir, "wide.txt"), wideText());
}

export interface DiffCase {
  name: string;
  file: string;
  edits: { old_text: string; new_text: string; expected_count?: number }[];
  dryRun: boolean;
}

const line = (i: number) => `l${String(i).padStart(6, "0")}\n`;

export const DIFF_CASES: DiffCase[] = [
  { name: "one-line dry run, 1 MiB of short lines", file: "short.txt", edits: [{ old_text: line(70_000), new_text: "changed\n" }], dryRun: true },
  { name: "one-line real edit, 1 MiB of short lines", file: "short-real.txt", edits: [{ old_text: line(70_000), new_text: "changed\n" }], dryRun: false },
  // the window runs from 3 lines above the first changed line to 3 below the last: 10 000 a side
  { name: "window of 20 000 short lines, both ends", file: "short.txt", edits: [{ old_text: line(50_000), new_text: "first!!\n" }, { old_text: line(59_993), new_text: "last!!!\n" }], dryRun: true },
  { name: "210 scattered lines in a 19 700-line window", file: "marked-under.txt", edits: [{ old_text: "M", new_text: "m", expected_count: 210 }], dryRun: true },
  { name: "499 scattered lines (over comparisons)", file: "marked-over.txt", edits: [{ old_text: "M", new_text: "m", expected_count: 499 }], dryRun: true },
  { name: "75 of 3000 lines of a 3-line alphabet", file: "alphabet.txt", edits: [{ old_text: "Y\n", new_text: "X\n", expected_count: 75 }], dryRun: true },
  { name: "1 MiB window of a long line, 2 hunks", file: "wide.txt", edits: [{ old_text: "CHANGE-1", new_text: "DONE-001" }, { old_text: "CHANGE-2", new_text: "DONE-002" }], dryRun: true },
  { name: "replace-all on every line of 1 MiB", file: "short.txt", edits: [{ old_text: "l", new_text: "L", expected_count: SHORT_LINES.length }], dryRun: true },
  { name: "first and last line of 1 MiB", file: "short.txt", edits: [{ old_text: line(0), new_text: "first!!\n" }, { old_text: line(131_070), new_text: "last!!!\n" }], dryRun: true },
];
