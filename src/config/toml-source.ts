// serverfs.toml → the raw document. smol-toml already refuses duplicate keys and malformed
// syntax; its message is not forwarded because it quotes the offending line (which may hold a
// secret), only the position is.
import { parse, TomlError } from "smol-toml";
import { configurationError, dottedKey, type KeyNamer } from "./problems.ts";
import { readConfigText } from "./read-source.ts";

export interface ParsedSource {
  raw: unknown;
  namer: KeyNamer;
}

export function parseTomlSource(file: string): ParsedSource {
  const text = readConfigText(file);
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    const where = err instanceof TomlError ? ` at line ${err.line}, column ${err.column}` : "";
    throw configurationError(file, [{ key: "", reason: `invalid TOML${where}` }]);
  }
  return { raw, namer: dottedKey };
}
