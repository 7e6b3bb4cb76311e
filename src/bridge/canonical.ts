// Canonical JSON (sorted keys, compact, UTF-8) and SHA-256 helpers: the request fingerprint,
// the manifest hash and the policy hash must recompute identically from the stored JSON.
import { createHash, randomBytes } from "node:crypto";

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("non-finite number");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}

export function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

/** Longest prefix of `s` whose UTF-8 encoding fits in `maxBytes`, never splitting a character. */
export function utf8Prefix(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.byteLength <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}
