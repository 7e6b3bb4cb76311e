// Removing a private scratch tree (a turn's temp dir, a probe's scratch dir). `rmSync` with
// `recursive` is the fast path; where it fails as a whole (Windows Bun under Wine 8.0 answers
// EFAULT for any non-empty directory) a plain walk of unlink/rmdir removes the same tree. The walk
// never follows a link: a symlink or junction is removed as the link itself, its target untouched.
import fs from "node:fs";
import path from "node:path";

function walk(p: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return;
  }
  if (st.isDirectory() && !st.isSymbolicLink()) {
    for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    fs.rmdirSync(p);
    return;
  }
  try {
    fs.unlinkSync(p);
  } catch (err) {
    // A Windows directory symlink or junction is removed with rmdir, not unlink.
    if (!st.isSymbolicLink()) throw err;
    fs.rmdirSync(p);
  }
}

/** Removes `dir` and everything under it; absent is fine. Throws only when the walk fails too. */
export function removeTree(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  } catch {
    // fall through to the walk
  }
  walk(dir);
}
