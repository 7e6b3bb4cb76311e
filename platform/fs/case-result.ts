// The answer of the case-sensitivity probe (./case-sensitivity.ts), shared by its per-OS parts.

export type CaseBasis = "detected-sensitive" | "detected-insensitive" | "unknown";

export interface CaseSensitivity {
  /** Whether names must be matched case-insensitively: true when detected so and when unknown. */
  insensitive: boolean;
  basis: CaseBasis;
  /** Why, for doctor and logs; never contains the path. */
  reason: string;
  /** Case-sensitive, but NFC and NFD spellings still name one file (case-sensitive APFS). */
  normalizationInsensitive?: boolean;
}

export function sensitive(reason: string): CaseSensitivity {
  return { insensitive: false, basis: "detected-sensitive", reason };
}

export function insensitive(reason: string): CaseSensitivity {
  return { insensitive: true, basis: "detected-insensitive", reason };
}

export function unknown(reason: string): CaseSensitivity {
  return { insensitive: true, basis: "unknown", reason };
}

