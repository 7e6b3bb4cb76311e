// Strict RFC 4648 base64: standard alphabet only, no whitespace, no URL-safe characters, length a
// multiple of 4 with correct `=` padding, and canonical: the bits padding leaves unused in the last
// character must be zero (RFC 4648 §3.5), so each byte string has exactly one accepted encoding
// (`QQ==` is "A"; `QR==` is refused rather than silently decoded to "A" too). The encoded-length
// bound is checked before any decoding.

/** Longest encoding of a payload of at most `maxBytes`. */
export function maxEncodedLength(maxBytes: number): number {
  return 4 * Math.ceil(maxBytes / 3);
}

/** The 6-bit value of a standard-alphabet character, or -1. */
function sextet(c: number): number {
  if (c >= 65 && c <= 90) return c - 65;
  if (c >= 97 && c <= 122) return c - 71;
  if (c >= 48 && c <= 57) return c + 4;
  if (c === 43) return 62;
  if (c === 47) return 63;
  return -1;
}

export function isStrictBase64(s: string): boolean {
  const n = s.length;
  if (n % 4 !== 0) return false;
  if (n === 0) return true;
  let pad = 0;
  if (s.charCodeAt(n - 1) === 61) pad = s.charCodeAt(n - 2) === 61 ? 2 : 1;
  for (let i = 0; i < n - pad; i++) if (sextet(s.charCodeAt(i)) === -1) return false;
  // With one `=` the last character carries 2 unused bits, with two `=` 4 unused bits.
  if (pad > 0) {
    const last = sextet(s.charCodeAt(n - pad - 1));
    if ((last & (pad === 1 ? 0b11 : 0b1111)) !== 0) return false;
  }
  return true;
}

export function decodeStrictBase64(s: string): Buffer | null {
  if (!isStrictBase64(s)) return null;
  return Buffer.from(s, "base64");
}
