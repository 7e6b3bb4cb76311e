// refuse_hardlinked_reads: a hard link inside a workdir to a file outside it (any local user can
// make one to a file they can read, without touching the workdir's policy) is refused by every
// content channel, skipped by search, still described by stat and named by find. Default: read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { forceResolver } from "../../platform/fs/linux.ts";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { expectCode, registry, tempDir, workdir, write } from "./helpers.ts";

const linux = process.platform === "linux";

/** Every file under `dir`: path, link count and content, to prove nothing changed. */
function snapshot(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort().map((rel) => {
    const st = fs.lstatSync(path.join(dir, rel));
    return st.isFile() ? `${rel}:${st.nlink}:${fs.readFileSync(path.join(dir, rel), "utf8")}` : `${rel}/`;
  });
}

for (const mode of ["openat2", "walk"] as const) {
  describe.skipIf(!linux && mode === "walk")(`refuse_hardlinked_reads (${mode})`, () => {
    let base: string;
    let root: string;
    let svc: FileService;
    let before: string[];

    beforeAll(() => {
      if (linux) forceResolver(mode);
      base = tempDir("serverfs-hardlinks-");
      root = path.join(base, "root");
      write(base, "outside/secret.txt", "needle SECRET outside\n");
      write(root, "plain.txt", "needle plain\n");
      write(root, "twin-a.txt", "needle twin\n");
      fs.linkSync(path.join(base, "outside/secret.txt"), path.join(root, "link.txt"));
      fs.mkdirSync(path.join(root, "sub"));
      fs.linkSync(path.join(root, "twin-a.txt"), path.join(root, "sub/twin-b.txt")); // both names inside
      svc = createFileService(
        registry([
          workdir("strict", root, { refuse_hardlinked_reads: true, binary_transfer_enabled: true }),
          workdir("plain", root, { binary_transfer_enabled: true }),
        ]),
      );
      before = snapshot(base);
    });
    afterAll(() => {
      svc.close();
      if (linux) forceResolver(null);
      fs.rmSync(base, { recursive: true, force: true });
    });

    test("every content read of a multiply-linked file is MULTIPLE_HARDLINKS_NOT_SUPPORTED", async () => {
      for (const p of ["link.txt", "twin-a.txt", "sub/twin-b.txt"]) {
        const a = { workdir: "strict", path: p };
        const err = await expectCode(svc.readTextFile(a), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
        expect(err.message).toBe(`strict:${p} — file has more than one hard link, and this workdir does not read such files`);
        await expectCode(svc.readResource(a), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
        await expectCode(svc.downloadBinaryFile(a), "MULTIPLE_HARDLINKS_NOT_SUPPORTED");
      }
      expect(snapshot(base)).toEqual(before);
    });

    test("a single-link file still reads; stat reports a linked file; find names it; search skips it", async () => {
      expect((await svc.readTextFile({ workdir: "strict", path: "plain.txt" })).content).toBe("needle plain\n");
      const st = await svc.statFile({ workdir: "strict", path: "link.txt" });
      expect([st.type, st.size]).toEqual(["file", 22]);
      const found = (await svc.findFiles({ workdir: "strict", pattern: "*.txt", limit: 100 })).matches.map((m) => m.path).sort();
      expect(found).toEqual(["link.txt", "plain.txt", "sub/twin-b.txt", "twin-a.txt"]);
      const hits = await svc.searchText({ workdir: "strict", query: "needle", limit: 100 });
      expect(hits.matches.map((m) => m.path)).toEqual(["plain.txt"]);
      expect((await svc.searchText({ workdir: "strict", query: "SECRET", limit: 100 })).matches).toEqual([]);
      expect(snapshot(base)).toEqual(before);
    });

    test("default (false): a hard-linked file is read like any other", async () => {
      expect((await svc.readTextFile({ workdir: "plain", path: "link.txt" })).content).toBe("needle SECRET outside\n");
      expect((await svc.readResource({ workdir: "plain", path: "sub/twin-b.txt" })).text).toBe("needle twin\n");
      expect(Buffer.from((await svc.downloadBinaryFile({ workdir: "plain", path: "link.txt" })).bytes).toString()).toBe("needle SECRET outside\n");
      const hits = await svc.searchText({ workdir: "plain", query: "needle", limit: 100 });
      expect(hits.matches.map((m) => m.path).sort()).toEqual(["link.txt", "plain.txt", "sub/twin-b.txt", "twin-a.txt"]);
      expect(snapshot(base)).toEqual(before);
    });
  });
}
