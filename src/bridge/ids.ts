// Task and request ids, and the SHA-256 hex digest used for request fingerprints, manifest hashes
// and journal file names.
import { createHash, randomBytes } from "node:crypto";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** `prefix` followed by 96 random bits in hex, e.g. agt_0123456789abcdef01234567. */
export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString("hex")}`;
}
