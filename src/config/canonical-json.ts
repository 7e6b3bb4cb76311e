// Canonical JSON: object keys sorted recursively (by UTF-16 code unit, like Python's
// sort_keys), arrays in their given order. Used for the rendered document and fingerprints, so
// equal content always gives equal bytes.

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
