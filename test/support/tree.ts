// Every name and byte under a directory, as sorted lines: compared before and after a refused call
// to prove it changed nothing on disk. Plain node:fs only, so it runs under Windows Bun too.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export function treeSnapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        out.push(`${r}/`);
        walk(path.join(d, e.name), r);
      } else out.push(`${r}=${createHash("sha256").update(fs.readFileSync(path.join(d, e.name))).digest("hex")}`);
    }
  };
  walk(dir, "");
  return out;
}
