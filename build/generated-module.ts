// The command line both build-time generators share (build/tool-schemas.ts, build/config-check.ts):
// write the generated module, or with --check only say whether the checked-in one is stale.
import { readFileSync, writeFileSync } from "node:fs";

/** Write `text` to `file`; with `--check` in argv, exit 1 instead when `file` holds other bytes. */
export function writeOrCheckGenerated(file: string, text: string, script: string): void {
  if (process.argv.includes("--check")) {
    if (readFileSync(file, "utf8") !== text) {
      process.stderr.write(`build: ${file} is stale: run bun ${script}\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(file, text);
    process.stderr.write(`build: wrote ${file}\n`);
  }
}
