// JSON.parse silently keeps the last of two equal keys (`{"command":"/a","command":"/b"}`), so
// a profile could mean something other than what a reader of the file sees. This scan finds a
// duplicated key in text that JSON.parse has already accepted (so it may assume well-formed
// input) and returns its location as a key path.
import type { KeyPath } from "./problems.ts";

interface Frame {
  kind: "object" | "array";
  keys: Set<string>;
  index: number;
  /** Key (object) or index (array) of this frame within its parent. */
  at: string | number | null;
}

export function findDuplicateJsonKey(text: string): KeyPath | null {
  const stack: Frame[] = [];
  let pendingKey: string | null = null;
  const path = (): KeyPath => stack.slice(1).map((f) => f.at!);
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "{" || c === "[") {
      const parent = stack[stack.length - 1];
      const at = parent ? (parent.kind === "object" ? pendingKey : parent.index) : null;
      stack.push({ kind: c === "{" ? "object" : "array", keys: new Set(), index: 0, at });
      pendingKey = null;
    } else if (c === "}" || c === "]") {
      stack.pop();
    } else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top?.kind === "array") top.index++;
    } else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      const top = stack[stack.length - 1];
      let k = j + 1;
      while (k < text.length && /\s/.test(text[k]!)) k++;
      if (top?.kind === "object" && text[k] === ":") {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return [...path(), key];
        top.keys.add(key);
        pendingKey = key;
      }
      i = j;
    }
  }
  return null;
}
