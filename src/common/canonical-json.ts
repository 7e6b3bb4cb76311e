// Canonical JSON: object keys sorted recursively (by UTF-16 code unit, like Python's sort_keys),
// keys whose value is undefined left out, arrays in their given order, no whitespace. Everything
// hashed or compared byte for byte uses it — the rendered config document, profile fingerprints,
// the Bridge's request fingerprints and manifest hashes — so equal content always gives equal
// bytes, and a hash stored in the state database recomputes identically from the stored JSON.
// A non-finite number has no JSON form; it is refused rather than silently written as null.

export function canonicalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalize);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = canonicalize(v);
    }
    return out;
  }
  if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("non-finite number has no JSON form");
  return value;
}

/** Compact canonical form (hash input). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonicalize(value));
}

/** Indented canonical form with a trailing newline (documents people read). */
export function canonicalJsonPretty(value: unknown): string {
  return `${JSON.stringify(canonicalize(value), null, 2)}\n`;
}
