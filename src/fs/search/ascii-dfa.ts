// A flat transition table over re2js's own lazy DFA, for pieces of pure-ASCII text: one typed-array
// load and one match-flag load per byte, where re2js's DFA loop decodes a rune, looks up its class
// and follows an object's array per byte (~2-3x the time on the 2-core bench machine for patterns
// such as `[A-Z][a-z]+[0-9]{3}x`).
//
// Why it gives re2js's answers: every transition is re2js's own DFA.step(state, class, rune), asked
// once per (state, byte) and remembered here; the loop replays DFA.run() exactly (start state for
// the beginning of the text, a match as soon as a state is a match state, the end-of-text step at
// the end). For an ASCII byte the rune is the byte, so its class is re2js's latin1Class[byte].
// Empty-width assertions (^ $ \b) live in re2js's state flags, which its step computes; nothing
// here looks at them. Non-ASCII text never comes here (the caller checks isAscii).
//
// The start state: an unanchored search spends most bytes in it (for `[A-Z][a-z]+[0-9]{3}x`, every
// byte but an upper-case letter keeps it). When the ASCII bytes that leave it form at most two
// ranges, its whole row is asked of re2js once and the bytes that keep it are skipped four at a
// time (SWAR range tests on 32-bit words), so such a pattern costs about what a literal search does.
//
// Bounds: the table holds at most `maxStates` rows of 129 int32 (128 bytes and end of text),
// counted against the search's DFA budget; re2js's states are bounded by that budget too. When
// either is full, the table is dropped and the call answers null: the caller asks re2js, which
// resets its cache or falls back to its NFA as it always did. After RESETS_ALLOWED drops the table
// gives up for good (a pattern whose states explode gains nothing from it).
//
// re2js's internals are read from the pinned version (2.10.0): RE2JS.re2Input.dfa with step(),
// start(), latin1Class, numClasses and a `failed` flag. Any other shape: no table (null), and
// every test goes to re2js as before.

const ROW = 129;
const END_OF_TEXT = 128;
/** Bytes of table per state row. */
export const ROW_BYTES = ROW * 4;
const RESETS_ALLOWED = 8;
/** re2js's context at offset 0 of a text: EMPTY_BEGIN_TEXT | EMPTY_BEGIN_LINE. */
const BEGIN_OF_TEXT = { context: () => 4 | 1, step: () => -1 };

interface Re2jsState {
  readonly isMatch: boolean;
}

interface Re2jsDfa {
  failed: boolean;
  numClasses: number;
  latin1Class: Int32Array;
  step(state: Re2jsState, cls: number, rune: number, anchor: number): Re2jsState | null;
  start(input: typeof BEGIN_OF_TEXT, pos: number): Re2jsState | null;
}

function dfaOf(re: unknown): Re2jsDfa | null {
  const re2 = (re as { re2Input?: { dfa?: unknown; prog?: { numLb?: unknown } } }).re2Input;
  if (re2 === undefined || re2.prog?.numLb !== 0) return null;
  const dfa = re2.dfa as Partial<Re2jsDfa> | undefined;
  if (dfa === undefined || typeof dfa.step !== "function" || typeof dfa.start !== "function") return null;
  if (!(dfa.latin1Class instanceof Int32Array) || typeof dfa.numClasses !== "number" || typeof dfa.failed !== "boolean") return null;
  return dfa as Re2jsDfa;
}

/** Where the byte loop stopped (set by runTable): the byte it could not follow, or the one after it re-entered the start state. */
let stopAt = 0;
let stopFrom = 0;

/**
 * Follow the table from state `s0` over bytes[from, n): the final state (>= 0), MATCHED, MISSED
 * (stopAt/stopFrom: the byte and state with no transition in the table yet), or, when `start`
 * >= 0, RESTARTED as soon as the start state is entered again (stopAt: the next byte), so the
 * caller can skip ahead. Small and monomorphic on purpose: it is the per-byte loop.
 */
function runTable(table: Int32Array, match: Uint8Array, s0: number, bytes: Uint8Array, from: number, n: number, start: number): number {
  let s = s0;
  for (let i = from; i < n; i++) {
    const next = table[s * ROW + (bytes[i] as number)] as number;
    if (next < 0) {
      stopAt = i;
      stopFrom = s;
      return MISSED;
    }
    s = next;
    if (match[s] !== 0) return MATCHED;
    if (s === start) {
      stopAt = i + 1;
      return RESTARTED;
    }
  }
  return s;
}
const MATCHED = -1;
const MISSED = -2;
const RESTARTED = -3;

/**
 * The first word of w[k, end) holding a byte in [lo1, hi1] or [lo2, hi2], as SWAR sums (for
 * ASCII bytes x: x + (0x80 - lo) has its top bit set exactly when x >= lo, and x + (0x7f - hi)
 * exactly when x > hi; no sum carries into the next byte). `end` if none does.
 */
function firstWordInRanges(w: Uint32Array, k: number, end: number, addLo1: number, addHi1: number, addLo2: number, addHi2: number): number {
  for (; k < end; k++) {
    const x = w[k] as number;
    if (((((x + addLo1) & ~(x + addHi1)) | ((x + addLo2) & ~(x + addHi2))) & 0x80808080) !== 0) return k;
  }
  return end;
}

/** In ASCII text, the bytes that leave the start state, as at most two ranges in SWAR addends. */
interface StartExits {
  /** Per byte: 1 when it leaves the start state. */
  readonly leaves: Uint8Array;
  readonly addLo1: number;
  readonly addHi1: number;
  readonly addLo2: number;
  readonly addHi2: number;
}

function addend(v: number): number {
  return (v * 0x01010101) >>> 0;
}

/** Below this many bytes a test does not skip by words (the view costs more than it saves). */
const SKIP_MIN_BYTES = 64;

export class AsciiDfa {
  private states: Re2jsState[] = [];
  private readonly ids = new Map<Re2jsState, number>();
  private table: Int32Array;
  private match: Uint8Array;
  private start = -1;
  /** How to skip bytes that keep the start state (null: not worked out yet or not two ranges; false: none). */
  private exits: StartExits | null | false = null;
  private resets = 0;
  /** Tests this table answered (the rest went to re2js), for tests and benchmarks. */
  answered = 0;

  private constructor(
    private readonly dfa: Re2jsDfa,
    private readonly maxStates: number,
  ) {
    const first = Math.min(16, maxStates);
    this.table = new Int32Array(first * ROW).fill(-1);
    this.match = new Uint8Array(first);
  }

  /** A table for `re` holding at most `maxStates` rows, or null (re2js internals not as pinned, or no room). */
  static over(re: unknown, maxStates: number): AsciiDfa | null {
    const dfa = dfaOf(re);
    if (dfa === null || maxStates < 4) return null;
    return new AsciiDfa(dfa, maxStates);
  }

  /** Whether the pure-ASCII `bytes` hold a match, as re2js's test() would say; null: ask re2js. */
  test(bytes: Uint8Array): boolean | null {
    if (this.resets > RESETS_ALLOWED || this.dfa.failed) return null;
    if (this.start < 0) {
      const st = this.dfa.start(BEGIN_OF_TEXT, 0);
      const id = st === null ? -1 : this.intern(st);
      if (id < 0) return this.drop();
      this.start = id;
    }
    let s = this.start;
    if (this.match[s] !== 0) return this.answer(true);
    const n = bytes.length;
    if (this.exits === null) this.exits = this.startExits();
    const exits = n >= SKIP_MIN_BYTES && this.exits !== false ? this.exits : null;
    // a word view of the bytes from their first 4-byte-aligned offset
    const head = exits === null ? 0 : (4 - (bytes.byteOffset & 3)) & 3;
    const words = exits === null ? null : new Uint32Array(bytes.buffer, bytes.byteOffset + head, (n - head) >>> 2);
    let i = 0;
    for (;;) {
      if (s === this.start && words !== null && exits !== null) i = this.skipStart(bytes, i, n, head, words, exits);
      const r = runTable(this.table, this.match, s, bytes, i, n, words === null ? -1 : this.start);
      if (r === MATCHED) return this.answer(true);
      if (r >= 0) {
        s = r;
        break;
      }
      if (r === RESTARTED) {
        s = this.start;
        i = stopAt;
        if (i >= n) break;
        continue;
      }
      const next = this.fill(stopFrom, bytes[stopAt] as number);
      if (next < 0) return this.drop();
      if (this.match[next] !== 0) return this.answer(true);
      s = next;
      i = stopAt + 1;
      if (i >= n) break;
    }
    let end = this.table[s * ROW + END_OF_TEXT] as number;
    if (end < 0) end = this.fill(s, END_OF_TEXT);
    if (end < 0) return this.drop();
    return this.answer(this.match[end] !== 0);
  }

  /**
   * From bytes[i], in the start state: the first offset whose byte may leave it. Bytes before the
   * aligned head one by one, then whole words by SWAR; a word holding a leaving byte is handed
   * back from its first byte (runTable walks it).
   */
  private skipStart(bytes: Uint8Array, i: number, n: number, head: number, words: Uint32Array, exits: StartExits): number {
    const leaves = exits.leaves;
    while (i < n && (i < head || ((i - head) & 3) !== 0)) {
      if (leaves[bytes[i] as number] !== 0) return i;
      i++;
    }
    if (i >= n) return n;
    const k = firstWordInRanges(words, (i - head) >>> 2, words.length, exits.addLo1, exits.addHi1, exits.addLo2, exits.addHi2);
    if (k < words.length) return head + k * 4;
    // the tail after the last whole word
    for (i = head + words.length * 4; i < n; i++) if (leaves[bytes[i] as number] !== 0) return i;
    return n;
  }

  /**
   * Which ASCII bytes leave the start state: its whole row asked of re2js once. Usable when they
   * form at most two ranges (a class such as [A-Z] first); false otherwise, or when re2js's budget
   * or the table has no room for the row (then the table is not skipped, only walked).
   */
  private startExits(): StartExits | false {
    const leaves = new Uint8Array(256).fill(1);
    const ranges: [number, number][] = [];
    for (let b = 0; b < 128; b++) {
      let next = this.table[this.start * ROW + b] as number;
      if (next < 0) next = this.fill(this.start, b);
      if (next < 0) return false;
      if (next === this.start) {
        leaves[b] = 0;
        continue;
      }
      const last = ranges[ranges.length - 1];
      if (last !== undefined && last[1] === b - 1) last[1] = b;
      else ranges.push([b, b]);
    }
    if (ranges.length === 0 || ranges.length > 2) return false;
    const [r1, r2] = ranges as [[number, number], [number, number] | undefined];
    return {
      leaves,
      addLo1: addend(0x80 - r1[0]),
      addHi1: addend(0x7f - r1[1]),
      // no second range: x + 0 never sets a top bit in ASCII text
      addLo2: r2 === undefined ? 0 : addend(0x80 - r2[0]),
      addHi2: r2 === undefined ? 0 : addend(0x7f - r2[1]),
    };
  }

  private answer(hit: boolean): boolean {
    this.answered++;
    return hit;
  }

  /** The table is full or re2js's budget is: forget every row, and let re2js answer this call. */
  private drop(): null {
    this.resets++;
    this.states = [];
    this.ids.clear();
    this.table.fill(-1);
    this.start = -1;
    this.exits = null;
    return null;
  }

  private intern(st: Re2jsState): number {
    const known = this.ids.get(st);
    if (known !== undefined) return known;
    const id = this.states.length;
    if (id >= this.maxStates) return -1;
    if (id * ROW >= this.table.length) this.grow(Math.min(this.maxStates, this.match.length * 2));
    this.states.push(st);
    this.ids.set(st, id);
    this.match[id] = st.isMatch ? 1 : 0;
    return id;
  }

  private grow(rows: number): void {
    const table = new Int32Array(rows * ROW).fill(-1);
    table.set(this.table);
    const match = new Uint8Array(rows);
    match.set(this.match);
    this.table = table;
    this.match = match;
  }

  /** re2js's transition from row `s` on `byte` (END_OF_TEXT: the end), remembered; -1: no room. */
  private fill(s: number, byte: number): number {
    const dfa = this.dfa;
    const cls = byte === END_OF_TEXT ? dfa.numClasses : (dfa.latin1Class[byte] as number);
    const next = dfa.step(this.states[s] as Re2jsState, cls, byte === END_OF_TEXT ? -1 : byte, 0);
    if (next === null) return -1;
    const id = this.intern(next);
    if (id < 0) return -1;
    this.table[s * ROW + byte] = id;
    return id;
  }
}
