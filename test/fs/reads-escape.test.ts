// The escape classes on the three new read paths: read_multiple_files (every entry),
// read_media_file and read_text_file with tail_lines. Each target is content the tool would serve
// (a PNG for media, text for the others), so the path alone decides. On Linux it runs with the
// kernel resolver (openat2) and with the O_NOFOLLOW component walk.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { forceResolver } from "../../platform/fs/linux.ts";
import { createFileService, type FileService } from "../../src/fs/index.ts";
import { png } from "../support/media.ts";
import { registry, tempDir, workdir, write } from "./helpers.ts";

const linux = process.platform === "linux";

/** Path → expected code, the same for every tool. */
function escapeCases(base: string, root: string): [string, string][] {
  return [
    ["../other/secret", "PATH_OUTSIDE_WORKDIR"],
    ["sub/../../other/secret", "PATH_OUTSIDE_WORKDIR"],
    [path.join(base, "other", "secret"), "PATH_OUTSIDE_WORKDIR"], // absolute host path
    [path.join(root, "ok"), "PATH_OUTSIDE_WORKDIR"], // absolute path of a file inside the workdir
    ["linkdir/secret", "SYMLINK_NOT_ALLOWED"], // symlinked parent, to the other workdir
    ["inlink/ok", "SYMLINK_NOT_ALLOWED"], // symlinked parent inside the workdir
    ["leaf", "SYMLINK_NOT_ALLOWED"], // symlink leaf to a servable file
    ["otherleaf", "SYMLINK_NOT_ALLOWED"], // symlink leaf into the other workdir
    [".hidden/ok", "HIDDEN_PATH_NOT_ALLOWED"],
    ["keys/server.pem", "DENIED_PATH"],
    ["secrets/ok", "DENIED_PATH"], // extra_deny_globs
    ["sub/.serverfs-tmp-0123456789abcdef", "RESERVED_PATH"],
  ];
}

for (const mode of linux ? (["openat2", "walk"] as const) : ([null] as const)) {
  describe(`escape classes on the new read tools${mode ? ` (${mode})` : ""}`, () => {
    let base: string;
    let root: string;
    let svc: FileService;

    beforeAll(() => {
      if (mode) forceResolver(mode);
      base = tempDir();
      root = path.join(base, "w");
      const other = path.join(base, "other");
      const body = (name: string, kind: "text" | "media") => (kind === "media" ? png() : `${name} marker\n`);
      for (const kind of ["text", "media"] as const) {
        const r = path.join(root, kind);
        write(r, "ok", body("ok", kind));
        write(r, "real/ok", body("real", kind));
        write(r, ".hidden/ok", body("hidden", kind));
        write(r, "keys/server.pem", body("pem", kind));
        write(r, "secrets/ok", body("secret", kind));
        write(r, "sub/.serverfs-tmp-0123456789abcdef", body("reserved", kind));
        fs.symlinkSync(path.join(other, kind), path.join(r, "linkdir"));
        fs.symlinkSync("real", path.join(r, "inlink"));
        fs.symlinkSync("ok", path.join(r, "leaf"));
        fs.symlinkSync(path.join(other, kind, "secret"), path.join(r, "otherleaf"));
        write(path.join(other, kind), "secret", body("other", kind));
        // `../other/secret` from the workdir root <root>/<kind> is <root>/other/secret: make it exist too
        write(path.join(root, "other"), "secret", body("sibling", kind));
      }
      svc = createFileService(
        registry([
          workdir("text", path.join(root, "text"), { extra_deny_globs: ["secrets"] }),
          workdir("media", path.join(root, "media"), { extra_deny_globs: ["secrets"] }),
          workdir("other", other),
        ]),
      );
    });
    afterAll(() => {
      svc.close();
      if (mode) forceResolver(null);
    });

    test("the control paths are served", async () => {
      expect((await svc.readTextFile({ workdir: "text", path: "ok", tail_lines: 1 })).content).toBe("ok marker\n");
      expect((await svc.readMediaFile({ workdir: "media", path: "ok" })).meta.mime_type).toBe("image/png");
      expect((await svc.readMediaFile({ workdir: "other", path: "media/secret" })).meta.size).toBe(png().length);
      const many = await svc.readMultipleFiles({ workdir: "text", paths: ["ok", "real/ok"] });
      expect(many.returned).toBe(2);
    });

    test("read_text_file tail_lines: every escape class has its code", async () => {
      const got: [string, string][] = [];
      for (const [p] of escapeCases(base, path.join(root, "text"))) {
        try {
          await svc.readTextFile({ workdir: "text", path: p, tail_lines: 5 });
          got.push([p, "OK"]);
        } catch (err) {
          got.push([p, (err as { code: string }).code]);
        }
      }
      expect(got).toEqual(escapeCases(base, path.join(root, "text")));
    });

    test("read_media_file: every escape class has its code", async () => {
      const got: [string, string][] = [];
      for (const [p] of escapeCases(base, path.join(root, "media"))) {
        try {
          await svc.readMediaFile({ workdir: "media", path: p });
          got.push([p, "OK"]);
        } catch (err) {
          got.push([p, (err as { code: string }).code]);
        }
      }
      expect(got).toEqual(escapeCases(base, path.join(root, "media")));
    });

    test("read_multiple_files: every escape class in one call, each entry its own code, nothing leaks", async () => {
      const cases = escapeCases(base, path.join(root, "text"));
      const out = await svc.readMultipleFiles({ workdir: "text", paths: ["ok", ...cases.map(([p]) => p)] });
      expect(out.files.map((f) => [f.path, f.error?.code ?? "OK"])).toEqual([["ok", "OK"], ...cases]);
      const text = JSON.stringify(out);
      for (const marker of ["other marker", "sibling marker", "hidden marker", "pem marker", "secret marker", "reserved marker", "real marker"]) {
        expect(text).not.toContain(marker);
      }
    });

    test("another workdir's alias is not a way in: unknown alias is WORKDIR_NOT_FOUND for the whole call", async () => {
      await expect(svc.readMultipleFiles({ workdir: "nope", paths: ["ok"] })).rejects.toMatchObject({ code: "WORKDIR_NOT_FOUND" });
      await expect(svc.readMediaFile({ workdir: "nope", path: "ok" })).rejects.toMatchObject({ code: "WORKDIR_NOT_FOUND" });
      await expect(svc.readTextFile({ workdir: "nope", path: "ok", tail_lines: 1 })).rejects.toMatchObject({ code: "WORKDIR_NOT_FOUND" });
    });
  });
}
