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

/** Normalisation only (case-sensitive APFS): NFC, with the same ASCII fast path. */
export function nfcName(name: string): string {
  return ASCII_ONLY.test(name) ? name : name.normalize("NFC");
}

/** The highest code point that has a case mapping (Adlam); above it everything folds to itself. */
const LAST_CASED = 0x1e943;

// Per code point, computed at most once per process: -2 not yet known, -1 folds to several.
// However many wide classes the deny globs hold, the total cost is one sweep of the cased range.
const FOLD_TABLE = new Int32Array(LAST_CASED + 1).fill(-2);

function foldCp(cp: number): number | null {
  if (cp > LAST_CASED || (cp >= 0xd800 && cp <= 0xdfff)) return cp; // no case there
  let t = FOLD_TABLE[cp] as number;
  if (t === -2) {
    const f = foldName(String.fromCodePoint(cp));
    const fcp = f.codePointAt(0) as number;
    // A fold to several code points (`ß` → `ss`) has no single-character twin in a class.
    t = f.length === String.fromCodePoint(fcp).length ? fcp : -1;
    FOLD_TABLE[cp] = t;
  }
  return t === -1 ? null : t;
}

const UPPER_TABLE = new Uint8Array(LAST_CASED + 1); // 0 unknown, 1 no, 2 yes

/** Whether `cp` has other spellings although it is its own fold (`a` has `A`). */
function hasUpper(cp: number): boolean {
  if (cp > LAST_CASED) return false;
  let t = UPPER_TABLE[cp] as number;
  if (t === 0) {
    const ch = String.fromCodePoint(cp);
    t = ch.toUpperCase() !== ch ? 2 : 1;
    UPPER_TABLE[cp] = t;
  }
  return t === 2;
}

let preimages: Map<number, number[]> | null = null;

/** Every code point whose fold is `c` (c included): the spellings a filesystem treats as `c`. */
function spellingsOf(c: number): number[] {
  if (preimages === null) {
    // Built once, and only for a negated class with cased members (rare in deny globs).
    preimages = new Map();
    for (let cp = 0; cp <= LAST_CASED; cp++) {
      const f = foldCp(cp);
      if (f === null || f === cp) continue;
      const list = preimages.get(f);
      if (list) list.push(cp);
      else preimages.set(f, [cp]);
    }
  }
  return [c, ...(preimages.get(c) ?? [])];
}

type Interval = [number, number];

function contains(set: readonly Interval[], cp: number): boolean {
  return set.some(([lo, hi]) => cp >= lo && cp <= hi);
}

/** Cased code points of the set and their folds (the only members folding can change). */
type Cased = { cp: number; fold: number | null };
const CASED_CACHE = new Map<string, Cased[]>();

function casedMembers(set: readonly Interval[]): Cased[] {
  const out: Cased[] = [];
  for (const [lo, hi] of set) {
    const key = `${lo}-${hi}`;
    let members = CASED_CACHE.get(key);
    if (members === undefined) {
      members = [];
      for (let cp = lo; cp <= Math.min(hi, LAST_CASED); cp++) {
        const fold = foldCp(cp);
        if (fold !== cp || hasUpper(cp)) members.push({ cp, fold }); // changed by folding, or has other spellings
      }
      if (CASED_CACHE.size < 4096) CASED_CACHE.set(key, members);
    }
    out.push(...members);
  }
  return out;
}

const SPECIALS = [0x21 /* ! */, 0x2d /* - */, 0x5d /* ] */, 0x5e /* ^ */];

/** Members re-emitted so glob.ts parses back exactly this set: `]` first, `-` last, `!`/`^` never first. */
function emitClass(members: Interval[], negate: boolean): string {
  members.sort((x, y) => x[0] - y[0]);
  const merged: Interval[] = [];
  for (const iv of members) {
    const last = merged[merged.length - 1];
    if (last !== undefined && iv[0] <= last[1] + 1) last[1] = Math.max(last[1], iv[1]);
    else merged.push([iv[0], iv[1]]);
  }
  if (merged.length === 0) return negate ? "?" : "[]"; // `[!<nothing>]` is any character
  const special = new Set<number>();
  let body = "";
  const emit = (lo: number, hi: number) => {
    if (lo > hi) return;
    body += String.fromCodePoint(lo);
    if (hi === lo + 1) body += String.fromCodePoint(hi);
    else if (hi > lo) body += `-${String.fromCodePoint(hi)}`;
  };
  for (const [lo0, hi] of merged) {
    let lo = lo0;
    for (const sp of SPECIALS) {
      if (sp < lo || sp > hi) continue;
      special.add(sp);
      emit(lo, sp - 1);
      lo = sp + 1;
    }
    emit(lo, hi);
  }
  const head = special.has(0x5d) ? "]" : "";
  let tail = `${special.has(0x21) ? "!" : ""}${special.has(0x5e) ? "^" : ""}`;
  if (head === "" && body === "") {
    // Only `!`/`^`/`-`: `-` may lead, and a lone `!` or `^` after it is a plain member.
    return `[${negate ? "!" : ""}${special.has(0x2d) ? "-" : ""}${tail}]`;
  }
  tail += special.has(0x2d) ? "-" : "";
  return `[${negate ? "!" : ""}${head}${body}${tail}]`;
}

/**
 * A bracket class for folded names. A name is refused when ANY spelling of it that the
 * filesystem treats as the same would be refused, so a positive class also takes the fold of each
 * member, and a negated class excludes a folded character only when every spelling of it is a
 * member (`[!A-Z]` still matches `a`, since the file `A` is also reachable as `a`).
 * Null: folding changes nothing.
 */
function foldClass(body: string[], negate: boolean): string | null {
  const set: Interval[] = [];
  for (let k = 0; k < body.length; k++) {
    const a = (body[k] as string).codePointAt(0) as number;
    const b = body[k + 2];
    if (body[k + 1] === "-" && b !== undefined) {
      const hi = b.codePointAt(0) as number;
      k += 2;
      if (a <= hi) set.push([a, hi]); // glob.ts drops a reversed range: it matches nothing
    } else set.push([a, a]);
  }
  const cased = casedMembers(set);
  if (cased.length === 0) return null;
  if (!negate) {
    const out = [...set];
    for (const m of cased) if (m.fold !== null) out.push([m.fold, m.fold]);
    return emitClass(out, false);
  }
  // Negated: keep every uncased member; a folded character stays excluded only if all of its
  // spellings are members.
  const drop = new Set<number>();
  const add = new Set<number>();
  for (const m of cased) {
    if (m.fold === null) continue;
    if (spellingsOf(m.fold).every((v) => contains(set, v))) add.add(m.fold);
    else drop.add(m.fold);
  }
  const cut = [...drop].filter((x) => !add.has(x)).sort((x, y) => x - y);
  const out: Interval[] = [];
  for (const [lo, hi] of set) {
    let start = lo;
    for (const d of cut) {
      if (d < lo || d > hi) continue;
      if (d > start) out.push([start, d - 1]);
      start = d + 1;
    }
    if (start <= hi) out.push([start, hi]);
  }
  for (const c of add) out.push([c, c]);
  return emitClass(out, true);
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
