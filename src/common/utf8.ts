// UTF-8 sizes and cuts: limits are stated in bytes on the wire, while strings are UTF-16.

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
