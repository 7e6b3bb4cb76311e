// What a refused request must leave exactly as it was: bytes, size, mode, inode, mtime and the
// names beside the file (no temp file, no stray new entry).
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { physical } from "./helpers.ts";

interface Snapshot {
  sha256: string;
  size: number;
  mode: number;
  ino: number;
  mtimeMs: number;
  names: string[];
}

export function snapshot(root: string, rel: string): Snapshot {
  const p = path.join(root, rel);
  const st = fs.statSync(p);
  return {
    sha256: createHash("sha256").update(fs.readFileSync(p)).digest("hex"),
    size: st.size,
    mode: st.mode,
    ino: st.ino,
    mtimeMs: st.mtimeMs,
    names: physical(path.dirname(p)),
  };
}


export interface EntrySnapshot {
  name: string;
  mode: number;
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string | null;
}

/**
 * Every entry of `dir` (hidden and reserved ones included: a left-behind temp shows up here) with
 * its mode, size, mtime, inode and, for files, a hash of its bytes.
 */
export function dirSnapshot(dir: string): EntrySnapshot[] {
  return physical(dir).map((name) => {
    const st = fs.lstatSync(path.join(dir, name));
    return {
      name,
      mode: st.mode,
      size: st.size,
      mtimeMs: st.mtimeMs,
      ino: st.ino,
      sha256: st.isFile() ? createHash("sha256").update(fs.readFileSync(path.join(dir, name))).digest("hex") : null,
    };
  });
}

/** Names of serverfs temp files in `dir`. */
export function tempsIn(dir: string): string[] {
  return physical(dir).filter((n) => n.startsWith(".serverfs-tmp-"));
}
