// Revision tokens: an opaque, metadata-derived optimistic-concurrency token. Raw inode, uid and
// gid never leave the process; only a 64-bit prefix of a SHA-256 over them does. Always computed
// from fstat of the object (after publication for mutations, because link/rename/unlink move
// ctime and nlink), so the token a mutation returns equals the next stat_file.

import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";

export const REVISION_PATTERN = /^v1:[0-9a-f]{16}$/;

export function revisionOf(st: BigIntStats): string {
  const material = `${st.dev}:${st.ino}:${st.mode}:${st.uid}:${st.gid}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.nlink}`;
  return `v1:${createHash("sha256").update(material).digest("hex").slice(0, 16)}`;
}

/** RFC 3339 UTC, whole seconds: `YYYY-MM-DDTHH:MM:SSZ`. */
export function isoSeconds(st: { mtimeMs: number | bigint }): string {
  const ms = Math.floor(Number(st.mtimeMs) / 1000) * 1000;
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

export type ObjectType = "file" | "directory" | "symlink" | "other";

export function typeOf(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): ObjectType {
  if (st.isFile()) return "file";
  if (st.isDirectory()) return "directory";
  if (st.isSymbolicLink()) return "symlink";
  return "other";
}
