// What one inbound frame would cost to parse, read from its bytes as they arrive, before any
// JSON.parse. The byte cap bounds a frame's size, but not its cost: 10 MB of `{},{},…` is three
// million objects, which JSON.parse and the schema checks after it turn into hundreds of megabytes
// and seconds of work. The scanner is one pass over the bytes, chunk by chunk, that counts
// structural tokens and never allocates per value (long string bodies are skipped with a native
// indexOf), so the transport knows a frame is over a bound while it is still arriving and stops
// keeping its bytes. It also reads the top-level `id` and `method` members, so that such a request
// can still be answered under its own id.

/** Per-frame bounds on what parsing may build; every legitimate MCP message is far below them. */
export const FRAME_BOUNDS = {
  /** JSON values of every kind (objects, arrays, strings, numbers, true/false/null); member names not counted. */
  values: 10_000,
  /** Strings, member names included. */
  strings: 10_000,
  /** Nesting of arrays and objects. */
  depth: 64,
} as const;

export type FrameBound = keyof typeof FRAME_BOUNDS;
export type FrameBounds = Readonly<Record<FrameBound, number>>;

/** Longest top-level `id` or `method` value kept from a frame (longer ones cannot be answered or named). */
export const MAX_MEMBER_BYTES = 4096;

export interface FrameShape {
  /** The first bound the frame went over; undefined when it is within all of them. */
  over?: FrameBound;
  /** What the top-level value is, by its first byte; "none" for a line of nothing but whitespace. */
  top: "object" | "array" | "other" | "none";
  /** The top-level object has an `id` member / a `method` member (the last one counts, as in JSON.parse). */
  hasId: boolean;
  hasMethod: boolean;
  /** The last top-level `id` value's JSON text, when it is a string, number or literal of at most MAX_MEMBER_BYTES. */
  idText?: string;
  /** The last top-level `method` value's JSON text, when it is a string of at most MAX_MEMBER_BYTES. */
  methodText?: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

// Byte classes, looked up once per byte outside strings.
const SCALAR = 0;
const SPACE = 1;
const STRING = 2;
const OPEN = 3;
const CLOSE = 4;
const COMMA = 5;
const COLON = 6;
const CLASS = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0d]) CLASS[c] = SPACE;
CLASS[QUOTE] = STRING;
CLASS[OPEN_BRACE] = OPEN;
CLASS[OPEN_BRACKET] = OPEN;
CLASS[0x7d] = CLOSE;
CLASS[0x5d] = CLOSE;
CLASS[0x2c] = COMMA;
CLASS[0x3a] = COLON;

/** Bytes of a string body walked one by one before the rest is handed to indexOf (names, small values). */
const SHORT_STRING = 64;

// Which top-level member a string being read, or a value about to be read, belongs to.
const MEMBER_OTHER = 0;
const MEMBER_ID = 1;
const MEMBER_METHOD = 2;
// What the string being read is, for the members the scanner keeps.
const CAPTURE_NONE = 0;
const CAPTURE_NAME = 1;
const CAPTURE_VALUE = 2;

/** Longest member name compared against `id` / `method` (escaped: `\u006d\u0065…` is 36 bytes). */
const MAX_NAME_BYTES = 64;

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/**
 * Whether the string body b[0, len) decodes to the ASCII `name`, escapes included (`"\u0069d"` is
 * `id` to JSON.parse, so it must be here too).
 */
function nameIs(b: Uint8Array, len: number, name: string): boolean {
  let i = 0;
  for (let n = 0; n < name.length; n++) {
    if (i >= len) return false;
    let c = b[i] as number;
    if (c === BACKSLASH) {
      // Only a \uXXXX escape can spell an ASCII letter; any other escape ends the comparison.
      if (b[i + 1] !== 0x75 || i + 6 > len) return false;
      let code = 0;
      for (let h = 2; h < 6; h++) {
        const d = hexDigit(b[i + h] as number);
        if (d < 0) return false;
        code = code * 16 + d;
      }
      c = code;
      i += 6;
    } else {
      i += 1;
    }
    if (c !== name.charCodeAt(n)) return false;
  }
  return i === len;
}

/**
 * Scans one frame fed in pieces. Exact for valid JSON; for invalid JSON the counts are whatever the
 * bytes suggest (JSON.parse refuses such a frame anyway). It runs to the end even past a bound, so
 * that an `id` written after a huge `params` is still found.
 */
export class FrameScanner {
  private depth = 0;
  // values = containers + strings + scalars − member names, and every member name is followed by
  // exactly one colon: subtracting at each colon keeps the loop free of name/value bookkeeping.
  private values = 0;
  private strings = 0;
  private overBound: FrameBound | undefined;
  private topKind: FrameShape["top"] | undefined;
  private inString = false;
  /** Inside a string: the previous byte was a backslash that escapes the next one. */
  private escaped = false;
  /** Bytes of the current string walked one by one so far (the rest goes to indexOf). */
  private walked = 0;
  private inScalar = false;
  // The top-level object's members.
  private expectName = false;
  private member = MEMBER_OTHER;
  private awaitingValue = false;
  private hasId = false;
  private hasMethod = false;
  private capture = CAPTURE_NONE;
  private readonly name = new Uint8Array(MAX_NAME_BYTES);
  private nameLen = 0;
  private readonly value = new Uint8Array(MAX_MEMBER_BYTES);
  private valueLen = 0;
  private valueFits = true;
  private idText: string | undefined;
  private methodText: string | undefined;

  constructor(private readonly bounds: FrameBounds = FRAME_BOUNDS) {}

  /** Start over for the next frame (the transport keeps one scanner per connection). */
  reset(): void {
    this.depth = 0;
    this.values = 0;
    this.strings = 0;
    this.overBound = undefined;
    this.topKind = undefined;
    this.inString = false;
    this.escaped = false;
    this.walked = 0;
    this.inScalar = false;
    this.expectName = false;
    this.member = MEMBER_OTHER;
    this.awaitingValue = false;
    this.hasId = false;
    this.hasMethod = false;
    this.capture = CAPTURE_NONE;
    this.nameLen = 0;
    this.valueLen = 0;
    this.valueFits = true;
    this.idText = undefined;
    this.methodText = undefined;
  }

  /** The first bound exceeded so far. */
  get over(): FrameBound | undefined {
    return this.overBound;
  }

  /** The top-level value's kind, once its first byte was seen. */
  get top(): FrameShape["top"] | undefined {
    return this.topKind;
  }

  /** Both the top-level `id` and `method` have been read whole (what a refusal needs). */
  get membersKnown(): boolean {
    return this.hasId && this.hasMethod && this.capture !== CAPTURE_VALUE;
  }

  /** Scan b[from, to). */
  feed(b: Buffer, from: number, to: number): void {
    let i = from;
    while (i < to) {
      if (this.inString) {
        i = this.skipString(b, i, to);
        continue;
      }
      const c = b[i] as number;
      const kind = CLASS[c] as number;
      if (kind === SCALAR) {
        this.topKind ??= "other";
        if (!this.inScalar) this.startScalar();
        if (this.capture === CAPTURE_VALUE) this.keep(b, i, i + 1);
        i++;
        continue;
      }
      if (this.inScalar) this.endScalar();
      if (kind === SPACE) {
        i++;
        continue;
      }
      this.topKind ??= c === OPEN_BRACE ? "object" : c === OPEN_BRACKET ? "array" : "other";
      if (kind === STRING) {
        this.startString();
        if (this.capture === CAPTURE_VALUE) this.keep(b, i, i + 1);
        i++;
        continue;
      }
      if (kind === OPEN) {
        if (this.awaitingValue && this.depth === 1) this.memberValue(false);
        this.depth++;
        this.values++;
        if (this.depth === 1 && c === OPEN_BRACE) this.expectName = true;
        if (this.overBound === undefined) {
          if (this.depth > this.bounds.depth) this.overBound = "depth";
          else if (this.values > this.bounds.values) this.overBound = "values";
        }
      } else if (kind === CLOSE) {
        this.depth--;
      } else if (kind === COMMA) {
        if (this.depth === 1 && this.topKind === "object") this.expectName = true;
      } else {
        // A colon: the member name just counted as a value was not one.
        this.values--;
        if (this.depth === 1) this.awaitingValue = true;
      }
      i++;
    }
  }

  /** The frame's shape once all its bytes were fed. */
  finish(): FrameShape {
    if (this.inScalar) this.endScalar();
    if (this.overBound === undefined && this.values > this.bounds.values) this.overBound = "values";
    return this.shape();
  }

  /** The shape of what was fed so far. */
  shape(): FrameShape {
    const shape: FrameShape = { top: this.topKind ?? "none", hasId: this.hasId, hasMethod: this.hasMethod };
    if (this.overBound !== undefined) shape.over = this.overBound;
    if (this.hasId && this.idText !== undefined) shape.idText = this.idText;
    if (this.hasMethod && this.methodText !== undefined) shape.methodText = this.methodText;
    return shape;
  }

  private startScalar(): void {
    this.inScalar = true;
    this.values++;
    if (this.overBound === undefined && this.values > this.bounds.values) this.overBound = "values";
    if (this.awaitingValue && this.depth === 1) this.memberValue(true);
  }

  private endScalar(): void {
    this.inScalar = false;
    if (this.capture === CAPTURE_VALUE) this.endValue();
  }

  private startString(): void {
    this.inString = true;
    this.escaped = false;
    this.walked = 0;
    this.strings++;
    this.values++;
    if (this.overBound === undefined && this.strings > this.bounds.strings) this.overBound = "strings";
    if (this.depth !== 1 || this.topKind !== "object") return;
    if (this.expectName) {
      this.expectName = false;
      this.capture = CAPTURE_NAME;
      this.nameLen = 0;
    } else if (this.awaitingValue) {
      this.memberValue(true);
    }
  }

  private endString(): void {
    this.inString = false;
    if (this.capture === CAPTURE_NAME) {
      // The closing quote was kept too.
      const len = this.nameLen - 1;
      this.member = len > MAX_NAME_BYTES ? MEMBER_OTHER : nameIs(this.name, len, "id") ? MEMBER_ID : nameIs(this.name, len, "method") ? MEMBER_METHOD : MEMBER_OTHER;
      this.capture = CAPTURE_NONE;
    } else if (this.capture === CAPTURE_VALUE) {
      this.endValue();
    }
  }

  /** A value of the top-level object starts; `readable` when it is a string or a scalar, not a container. */
  private memberValue(readable: boolean): void {
    this.awaitingValue = false;
    if (this.member === MEMBER_ID) {
      this.hasId = true;
      this.idText = undefined;
    } else if (this.member === MEMBER_METHOD) {
      this.hasMethod = true;
      this.methodText = undefined;
    } else {
      return;
    }
    if (!readable) return;
    this.capture = CAPTURE_VALUE;
    this.valueLen = 0;
    this.valueFits = true;
  }

  private endValue(): void {
    this.capture = CAPTURE_NONE;
    if (!this.valueFits) return;
    const text = Buffer.from(this.value.buffer, this.value.byteOffset, this.valueLen).toString("utf8");
    if (this.member === MEMBER_ID) this.idText = text;
    else if (this.member === MEMBER_METHOD) this.methodText = text;
  }

  /** Keep b[from, to) of the name or value being captured, up to its buffer's size. */
  private keep(b: Buffer, from: number, to: number): void {
    if (this.capture === CAPTURE_NAME) {
      const room = MAX_NAME_BYTES - this.nameLen;
      const n = Math.min(room, to - from);
      if (n > 0) b.copy(this.name, this.nameLen, from, from + n);
      // One past the buffer marks a name too long to be `id` or `method`.
      this.nameLen = n < to - from ? MAX_NAME_BYTES + 1 : this.nameLen + n;
      return;
    }
    const room = MAX_MEMBER_BYTES - this.valueLen;
    if (to - from > room) {
      this.valueFits = false;
      return;
    }
    b.copy(this.value, this.valueLen, from, to);
    this.valueLen += to - from;
  }

  /** Walk a string body from b[i]; returns where scanning goes on (past its closing quote, or `to`). */
  private skipString(b: Buffer, i: number, to: number): number {
    const capturing = this.capture !== CAPTURE_NONE;
    // Short bodies (names, small values) are the common case: a byte loop beats a native call.
    let k = i;
    while (k < to && this.walked < SHORT_STRING) {
      const c = b[k] as number;
      this.walked++;
      k++;
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) {
        if (capturing) this.keep(b, i, k);
        this.endString();
        return k;
      }
    }
    if (k >= to) {
      if (capturing) this.keep(b, i, k);
      return k;
    }
    // Long bodies (base64, file content): jump from quote to quote; a quote after an odd run of
    // backslashes is escaped. `escaped` carries the parity of a run that began before `start`.
    const start = k;
    let at = k;
    for (;;) {
      const q = b.indexOf(QUOTE, at);
      const stop = q === -1 || q >= to ? to : q;
      let run = 0;
      for (let s = stop - 1; s >= at && b[s] === BACKSLASH; s--) run++;
      const odd = (run % 2 === 1) !== (stop - run === start && this.escaped);
      if (stop === to) {
        if (capturing) this.keep(b, i, to);
        this.escaped = odd;
        return to;
      }
      if (!odd) {
        if (capturing) this.keep(b, i, q + 1);
        this.endString();
        return q + 1;
      }
      this.escaped = false;
      at = q + 1;
    }
  }
}

/** Scan a whole frame b[0, end) at once. */
export function scanFrame(b: Buffer, end: number, bounds: FrameBounds = FRAME_BOUNDS): FrameShape {
  const scanner = new FrameScanner(bounds);
  scanner.feed(b, 0, end);
  return scanner.finish();
}
