// macOS part of the case-sensitivity probe: pathconf(2) with _PC_CASE_SENSITIVE answers for the
// volume itself (APFS and HFS+ are insensitive unless formatted "Case-sensitive"; both ignore
// normalisation either way). pathconf is not
// variadic, so the bun:ffi binding is sound on arm64 too. Written against the documented macOS
// ABI; it cannot run on the Linux CI (the skipped test in test/platform/case-sensitivity.test.ts
// says so).

import { dlopen } from "bun:ffi";
import { insensitive, sensitive, unknown, type CaseSensitivity } from "./case-result.ts";

/** <unistd.h> on macOS. */
const PC_CASE_SENSITIVE = 11;

function load() {
  return dlopen("/usr/lib/libSystem.B.dylib", {
    pathconf: { args: ["ptr", "i32"], returns: "i64" },
  }).symbols;
}
let lib: ReturnType<typeof load> | null = null;

export function darwinCaseSensitivity(root: string): CaseSensitivity {
  lib ??= load();
  const r = Number(lib.pathconf(Buffer.from(`${root}\0`, "utf8"), PC_CASE_SENSITIVE));
  // Even case-sensitive APFS and HFS+ ignore Unicode normalisation: `é` and `e\u0301` are one name.
  if (r === 1) return { ...sensitive("the volume is formatted case-sensitive"), normalizationInsensitive: true };
  if (r === 0) return insensitive("the volume matches names case-insensitively (APFS/HFS+ default)");
  return unknown("pathconf(_PC_CASE_SENSITIVE) gave no answer");
}
