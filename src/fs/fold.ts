// Name folding for case-insensitive workdirs (docs/security.md, "Case-insensitive filesystems").
// A folded name is a representative of every spelling such a filesystem may treat as the same
// entry: NFC (APFS and ext4 casefold also ignore normalisation), then each code point upper- and
// then lower-cased. Upper-then-lower also merges `ſ`/`s`, `K` (Kelvin)/`k` and `ß`/`ss`, so it
// folds at least as much as Unicode case folding: over-folding only refuses more, which is the
// safe side. Mapping code point by code point keeps it context-free (no final-sigma rule), so a
// glob folded here and a name folded here agree.

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const charCache = new Map<string, string>();

function foldChar(ch: string): string {
  let f = charCache.get(ch);
  if (f === undefined) {
    f = ch.toUpperCase().toLowerCase();
    if (charCache.size < 65536) charCache.set(ch, f);
  }
  return f;
}

/** Hot path of every walk: an ASCII name (nearly all of them) costs one lower-casing. */
export function foldName(name: string): string {
  if (ASCII_ONLY.test(name)) return name.toLowerCase();
  let out = "";
  for (const ch of name.normalize("NFC")) out += foldChar(ch);
  // Lower-casing can emit combining marks (`İ` → `i̇`); recompose so names compare in one form.
  return out.normalize("NFC");
}

/** The highest code point that has a case mapping (Adlam); ranges above it fold to themselves. */
const LAST_CASED = 0x1e943;
const RANGE_CACHE = new Map<string, number[]>();

/** Single-code-point folds of the members of lo..hi that differ from the member itself. */
function foldedMembers(lo: number, hi: number): number[] {
  const key = `${lo}-${hi}`;
  let out = RANGE_CACHE.get(key);
  if (out !== undefined) return out;
  out = [];
  for (let cp = lo; cp <= Math.min(hi, LAST_CASED); cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue; // lone surrogates have no case
    const f = foldName(String.fromCodePoint(cp));
    const fcp = f.codePointAt(0) as number;
    if (fcp !== cp && f.length === String.fromCodePoint(fcp).length) out.push(fcp);
  }
  RANGE_CACHE.set(key, out);
  return out;
}

const SPECIAL = new Set([0x5d /* ] */, 0x2d /* - */, 0x21 /* ! */, 0x5e /* ^ */]);

/**
 * A bracket class whose members gain their folded twins, re-emitted so glob.ts parses it back to
 * exactly that set (`]` first, `-` last, `!`/`^` never first). Null: folding adds nothing.
 */
function foldClass(body: string[], negate: boolean): string | null {
  const intervals: [number, number][] = [];
  const added: number[] = [];
  for (let k = 0; k < body.length; k++) {
    const a = (body[k] as string).codePointAt(0) as number;
    const b = body[k + 2];
    let lo = a;
    let hi = a;
    if (body[k + 1] === "-" && b !== undefined) {
      hi = b.codePointAt(0) as number;
      k += 2;
      if (lo > hi) continue; // glob.ts drops a reversed range: it matches nothing
    }
    intervals.push([lo, hi]);
    added.push(...foldedMembers(lo, hi));
  }
  if (added.length === 0) return null;
  for (const cp of added) intervals.push([cp, cp]);
  intervals.sort((x, y) => x[0] - y[0]);
  const special = new Set<number>();
  let members = "";
  const emit = (lo: number, hi: number) => {
    if (lo > hi) return;
    members += String.fromCodePoint(lo);
    if (hi === lo + 1) members += String.fromCodePoint(hi);
    else if (hi > lo) members += `-${String.fromCodePoint(hi)}`;
  };
  let cur: [number, number] | null = null;
  const flush = (iv: [number, number]) => {
    // Cut the four specials out of the interval; they are emitted in safe positions below.
    let lo = iv[0];
    for (const s of [...SPECIAL].sort((x, y) => x - y)) {
      if (s < lo || s > iv[1]) continue;
      special.add(s);
      emit(lo, s - 1);
      lo = s + 1;
    }
    emit(lo, iv[1]);
  };
  for (const iv of intervals) {
    if (cur !== null && iv[0] <= cur[1] + 1) cur[1] = Math.max(cur[1], iv[1]);
    else {
      if (cur !== null) flush(cur);
      cur = [iv[0], iv[1]];
    }
  }
  if (cur !== null) flush(cur);
  const head = special.has(0x5d) ? "]" : "";
  const tail = `${special.has(0x21) ? "!" : ""}${special.has(0x5e) ? "^" : ""}${special.has(0x2d) ? "-" : ""}`;
  return `[${negate ? "!" : ""}${head}${members}${tail}]`;
}

/**
 * The glob that, matched against folded names, matches what `glob` would on a case-insensitive
 * filesystem. Class syntax follows glob.ts: `[!...]` (and `[^...]` in path globs) negates, a
 * leading `]` is a member, an unterminated `[` is a literal.
 */
export function foldGlob(glob: string, caretNegates: boolean): string {
  const chars = Array.from(glob.normalize("NFC"));
  let out = "";
  let run = ""; // literal characters fold as one run, exactly as a name would
  const literal = () => {
    out += foldName(run);
    run = "";
  };
  for (let i = 0; i < chars.length; ) {
    const c = chars[i++] as string;
    if (c === "*" || c === "?") {
      literal();
      out += c;
      continue;
    }
    if (c !== "[") {
      run += c;
      continue;
    }
    literal();
    let j = i;
    let negate = false;
    if (chars[j] === "!" || (caretNegates && chars[j] === "^")) {
      negate = true;
      j++;
    }
    const bodyStart = j;
    if (chars[j] === "]") j++;
    while (j < chars.length && chars[j] !== "]") j++;
    if (j >= chars.length) {
      run += "["; // unterminated: a literal
      continue;
    }
    const folded = foldClass(chars.slice(bodyStart, j), negate);
    out += folded ?? chars.slice(i - 1, j + 1).join("");
    i = j + 1;
  }
  literal();
  return out;
}
