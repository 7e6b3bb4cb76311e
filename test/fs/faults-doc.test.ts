// docs/tools.md's "Filesystem faults" table is the errno mapping of src/fs/fail.ts, row for row:
// every errno the code maps has a row naming its code, and every code in the table is a real one.
import { expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { FS_ERROR_CODES, isErrorCode } from "../../src/errors.ts";
import { FAULT_CODES } from "../../src/fs/fail.ts";

const doc = fs.readFileSync(path.resolve(import.meta.dir, "../../docs/tools.md"), "utf8");

function faultRows(): { errnos: string[]; code: string }[] {
  const section = doc.slice(doc.indexOf("## Filesystem faults"));
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("| errno |")));
  return table
    .split("\n")
    .filter((l) => /^\| `E/.test(l))
    .map((l) => {
      const [errnos, code] = l.split("|").slice(1, 3) as [string, string];
      return { errnos: [...errnos.matchAll(/`(E[A-Z]+)`/g)].map((m) => m[1]!), code: /`([A-Z_]+)`/.exec(code)![1]! };
    });
}

test("every errno the file layer maps is a row of the table, with its code", () => {
  const rows = faultRows();
  for (const [errno, code] of Object.entries(FAULT_CODES)) {
    expect({ errno, code: rows.find((r) => r.errnos.includes(errno))?.code }).toEqual({ errno, code });
  }
  expect(rows.find((r) => r.errnos.includes("EACCES"))?.code).toBe("ACCESS_DENIED");
});

test("every code in the table is a file-tool error code", () => {
  const rows = faultRows();
  expect(rows.length).toBeGreaterThanOrEqual(4);
  for (const r of rows) {
    expect(isErrorCode(r.code)).toBe(true);
    expect(FS_ERROR_CODES as readonly string[]).toContain(r.code);
  }
});
