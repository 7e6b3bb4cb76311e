// Removing a private scratch tree (a turn's temp dir, a probe's scratch dir, a provider's temp
// directory for the Bridge). It never follows a link: a symlink, junction or other reparse point
// is removed as the link itself, its target untouched.
// POSIX: `rmSync` with `recursive` works from lstat and unlinkat, which never follow a symlink;
// where it fails as a whole, a plain walk of lstat/unlink/rmdir removes the same tree.
// Windows: a walk by path cannot be trusted (libuv's lstat reports some junctions as plain
// directories), so platform/fs/remove-tree-windows.ts walks handle-relative NT opens instead.
import fs from "node:fs";
import path from "node:path";
import { removeTreeWindows } from "./remove-tree-windows.ts";

function walk(p: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    return;
  }
  if (st.isDirectory()) {
    for (const name of fs.readdirSync(p)) walk(path.join(p, name));
    fs.rmdirSync(p);
    return;
  }
  fs.unlinkSync(p);
}

/** Removes `dir` and everything under it; absent is fine. Throws only when the removal fails. */
export function removeTree(dir: string): void {
  if (process.platform === "win32") {
    removeTreeWindows(dir);
    return;
  }
  try {
    fs.rmSync(dir, { recursive: true, force: true });
    return;
  } catch {
    // fall through to the walk
  }
  walk(dir);
}
