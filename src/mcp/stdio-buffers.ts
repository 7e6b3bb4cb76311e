// Writing one answer without building it whole. JSON.stringify of an answer carrying an 8 MiB
// download (an ~11 MB frame) and stdout's conversion and queueing of that string cost several full
// copies; framePieces yields the frame in pieces of about 1 MiB instead, and the stdio transport
// (transport.ts) writes them one at a time with backpressure.
import { randomBytes } from "node:crypto";

const SEND_SLICE_CHARS = 1024 * 1024;
/** What JSON.stringify escapes in a string: quote, backslash, control characters, surrogates (lone ones). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * One answer as JSON text in pieces of at most about SEND_SLICE_CHARS, followed by '\n'. Strings
 * longer than a slice (a download's base64, a large page) are left out of the one JSON.stringify
 * call, via a per-answer placeholder, and escaped slice by slice as they are written: the
 * answer never exists as one string. Slicing anywhere is safe because JSON escapes code units,
 * so a surrogate pair split between two slices decodes back to the same pair.
 */
export function* framePieces(message: unknown): Generator<string> {
  const big: string[] = [];
  const mark = `\u0000serverfs-${randomBytes(8).toString("hex")}-`;
  const head = JSON.stringify(message, (_key, value: unknown) => {
    if (typeof value === "string" && value.length > SEND_SLICE_CHARS) {
      big.push(value);
      return `${mark}${big.length - 1}`;
    }
    return value;
  });
  if (big.length === 0) {
    yield `${head}\n`;
    return;
  }
  // The placeholder as it appears in the JSON text (its NUL is escaped as \u0000).
  const quoted = JSON.stringify(mark).slice(0, -1);
  let from = 0;
  for (let i = 0; i < big.length; i++) {
    const token = `${quoted}${i}"`;
    const at = head.indexOf(token, from);
    yield `${head.slice(from, at)}"`;
    const value = big[i] as string;
    for (let j = 0; j < value.length; j += SEND_SLICE_CHARS) {
      const slice = value.slice(j, j + SEND_SLICE_CHARS);
      // Base64 (a media read, a download) needs no escaping: written as it is, not copied again.
      yield NEEDS_ESCAPE.test(slice) ? JSON.stringify(slice).slice(1, -1) : slice;
    }
    yield '"';
    from = at + token.length;
  }
  yield `${head.slice(from)}\n`;
}
