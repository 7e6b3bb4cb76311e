// Strict RFC 4648 base64: standard alphabet only, no whitespace, no URL-safe characters, length a
// multiple of 4 with correct `=` padding. The encoded-length bound is checked before any decoding.

/** Longest encoding of a payload of at most `maxBytes`. */
export function maxEncodedLength(maxBytes: number): number {
  return 4 * Math.ceil(maxBytes / 3);
}

function isAlphabet(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47;
}

export function isStrictBase64(s: string): boolean {
  const n = s.length;
  if (n % 4 !== 0) return false;
  if (n === 0) return true;
  let pad = 0;
  if (s.charCodeAt(n - 1) === 61) pad = s.charCodeAt(n - 2) === 61 ? 2 : 1;
  for (let i = 0; i < n - pad; i++) if (!isAlphabet(s.charCodeAt(i))) return false;
  return true;
}

export function decodeStrictBase64(s: string): Buffer | null {
  if (!isStrictBase64(s)) return null;
  return Buffer.from(s, "base64");
}
