// Text that ends up in front of a reader (an assistant reading a tool's text, a human reading an
// error or an approval form, an operator reading doctor) must not draw: a file name holding a
// newline would otherwise print a fake entry, ESC would drive a terminal, and a bidirectional
// control would reorder what follows it. The one rule for every such rendering: C0 controls
// (newline, tab, ESC, …), DEL and C1 controls are shown as `\xNN`; the line and paragraph
// separators and the bidirectional controls as `\u{NNNN}`. Printable text, non-ASCII included, is
// left as it is. The raw value stays where a program reads it (structuredContent).

/** Characters that can draw, whatever surrounds them. */
const DRAWING = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves as it is of those (it already escapes C0 controls). */
const DRAWING_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

function shown(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
}

/** `text` with every character that can draw shown as an escape. */
export function escapeControls(text: string): string {
  return text.replace(DRAWING, shown);
}

/**
 * JSON text (from JSON.stringify) with every character that can draw written as a JSON `\uXXXX`
 * escape: it still parses to exactly the same value, and shows nothing raw. (JSON's own escapes
 * stay: a tab in a matched line is `\t`, a newline in a name `\n`, inside a quoted string.)
 */
export function escapeControlsInJson(json: string): string {
  return json.replace(DRAWING_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
