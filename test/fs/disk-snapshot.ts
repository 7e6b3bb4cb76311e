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

