// Time-of-check/time-of-use with real concurrent processes: an external reader never sees a torn
// or missing file while the service replaces it; reads racing an external writer either return a
// self-consistent result or FILE_CHANGED_DURING_READ.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ServerfsError } from "../../src/errors.ts";
import { repetitions } from "../support/stress.ts";
import { waitUntil } from "../support/proc.ts";
import { single, write } from "./helpers.ts";

/** Replacements the reader watches, and reads racing the appender (SERVERFS_STRESS=1: the stress lane's counts). */
const REPLACEMENTS = repetitions(60, 400);
const READS = repetitions(100, 1000);
const READS_CAP = 20_000;

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

describe("commit seam and changed-during-read", () => {
  test(`an external reader sees only the old or the new bytes across ${REPLACEMENTS} replacements`, async () => {
    const { svc, root, base } = single({ binary_transfer_enabled: true });
    const A = Buffer.alloc(256 * 1024, 0x41);
    const B = Buffer.alloc(256 * 1024, 0x42);
    write(root, "f.bin", A);
    // The reader's window is set by events: it has read A once before the first replacement, and
    // reads once more after the last one (B), so it sees both, and anything torn in between.
    const ready = path.join(base, "reader-ready");
    const stop = path.join(base, "reader-stop");
    const reader = Bun.spawn([process.execPath, path.join(import.meta.dir, "fixtures/reader.ts"), path.join(root, "f.bin"), ready, stop], { stdout: "pipe" });
    expect(await waitUntil(() => fs.existsSync(ready), 20_000)).toBe(true);
    let rev = (await svc.statFile({ workdir: "w", path: "f.bin" })).revision;
    for (let i = 0; i < REPLACEMENTS; i++) {
      const next = i % 2 === 0 ? B : A;
      rev = (await svc.uploadBinaryFile({ workdir: "w", path: "f.bin", data_base64: next.toString("base64"), overwrite: true, expected_revision: rev })).revision;
    }
    if (REPLACEMENTS % 2 === 0) await svc.uploadBinaryFile({ workdir: "w", path: "f.bin", data_base64: B.toString("base64"), overwrite: true, expected_revision: rev });
    fs.writeFileSync(stop, "");
    const out = JSON.parse((await new Response(reader.stdout).text()).trim());
    expect(out.reads).toBeGreaterThanOrEqual(2);
    expect(new Set(out.seen)).toEqual(new Set([sha(A), sha(B)]));
    expect(fs.readdirSync(root)).toEqual(["f.bin"]);
  });

  test("reads racing an external appender: consistent results or FILE_CHANGED_DURING_READ only", async () => {
    const { svc, root } = single({ binary_transfer_enabled: true, max_read_bytes: 4 * 1024 * 1024 });
    write(root, "grow.txt", Buffer.alloc(1024 * 1024, 0x61));
    const appender = Bun.spawn([process.execPath, path.join(import.meta.dir, "fixtures/appender.ts"), path.join(root, "grow.txt")], { stdout: "ignore" });
    try {
      // the appender is running once the file has grown (observed, not waited for)
      expect(await waitUntil(() => fs.statSync(path.join(root, "grow.txt")).size !== 1024 * 1024, 20_000)).toBe(true);
      const codes = new Map<string, number>();
      let ok = 0;
      // At least READS reads, and on until the race was caught at least once: how often a read
      // overlaps an append depends on the machine, so the count is not fixed, only capped.
      for (let i = 0; i < READS || ((codes.get("FILE_CHANGED_DURING_READ") ?? 0) === 0 && i < READS_CAP); i++) {
        try {
          if (i % 2 === 0) {
            const d = await svc.downloadBinaryFile({ workdir: "w", path: "grow.txt" });
            expect(d.meta.size).toBe(d.bytes.length);
            expect(d.meta.sha256).toBe(sha(d.bytes));
          } else {
            const r = await svc.readTextFile({ workdir: "w", path: "grow.txt", max_lines: 1 });
            expect(r.bytes_returned).toBe(Buffer.byteLength(r.content));
          }
          ok++;
        } catch (err) {
          if (!(err instanceof ServerfsError)) throw err;
          codes.set(err.code, (codes.get(err.code) ?? 0) + 1);
        }
      }
      for (const code of codes.keys()) expect(["FILE_CHANGED_DURING_READ", "BINARY_FILE_TOO_LARGE"]).toContain(code);
      expect(codes.get("FILE_CHANGED_DURING_READ") ?? 0).toBeGreaterThan(0);
    } finally {
      appender.kill("SIGKILL");
      await appender.exited;
    }
  });
});
