// Code-point order for names. JavaScript's default string order compares UTF-16 code units, which
// puts U+E000..U+FFFF after astral characters; remapping the two ranges restores code-point order
// (the same order as comparing UTF-8 bytes) without allocating. It lives in the platform layer
// because every backend's bounded directory reader (dir-select.ts) selects in this order.

function fix(c: number): number {
  if (c >= 0xd800 && c <= 0xdfff) return c + 0x2000;
  if (c >= 0xe000) return c - 0x800;
  return c;
}

export function compareNames(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x < 0xd800 && y < 0xd800 ? x - y : fix(x) - fix(y);
  }
  return a.length - b.length;
}

const BEYOND_BMP_LOW = /[\ud800-\uffff]/;

/** Sort one directory's entries (distinct names) by name in code-point order; the native comparison suffices unless a name holds U+D800 or above. */
export function sortByName<T extends { name: string }>(entries: T[]): T[] {
  let simple = true;
  for (const e of entries) {
    if (BEYOND_BMP_LOW.test(e.name)) {
      simple = false;
      break;
    }
  }
  // one comparison: the names of one directory are distinct, so "not less" means "greater"
  if (simple) return entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  return entries.sort((a, b) => compareNames(a.name, b.name));
}

/** sortByName for bare names (distinct): the engine's default string order is code-unit order, which is code-point order unless a name holds U+D800 or above. */
export function sortNames(names: string[]): string[] {
  for (const n of names) if (BEYOND_BMP_LOW.test(n)) return names.sort(compareNames);
  return names.sort();
}
