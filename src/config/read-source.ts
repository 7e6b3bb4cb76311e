// Reading a configuration file: bounded, strict UTF-8, and failures reported without the
// OS's own message (which names the resolved host path).
import * as fs from "node:fs";
import { errnoCode, ServerfsError } from "../errors.ts";
import { BOUNDS } from "./defaults.ts";
import { configurationError } from "./problems.ts";

export function readConfigText(file: string): string {
  const fail = (reason: string) => configurationError(file, [{ key: "", reason }]);
  let bytes: Buffer;
  try {
    const st = fs.statSync(file);
    if (st.isDirectory()) throw fail("is a directory, not a configuration file");
    if (!st.isFile()) throw fail("is not a regular file");
    if (st.size > BOUNDS.maxConfigFileBytes) throw fail(`is larger than ${BOUNDS.maxConfigFileBytes} bytes`);
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof ServerfsError) throw err;
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw fail("not found; fix: check the path, or write a starter file with serverfs init");
    if (code === "EACCES" || code === "EPERM") throw fail("cannot read the file (permission denied); fix: make it readable by this user");
    throw fail(`cannot read the file (${code ?? "I/O error"}); fix: check the file and its filesystem`);
  }
  if (bytes.length > BOUNDS.maxConfigFileBytes) throw fail(`is larger than ${BOUNDS.maxConfigFileBytes} bytes`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw fail("is not valid UTF-8");
  }
  // A BOM is an editor artefact, not content.
  return text.startsWith("\uFEFF") ? text.slice(1) : text;
}
