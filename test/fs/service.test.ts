// The service surface itself: list_workdirs, published limits, per-workdir limits chosen per
// call, revision properties, message shapes.
import { describe, expect, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { createFileService } from "../../src/fs/index.ts";
import { expectCode, registry, tempDir, workdir, write } from "./helpers.ts";

describe("service surface", () => {
  test("list_workdirs keeps registry order and reports access, binary and agent policy", () => {
    const base = tempDir();
    const svc = createFileService(
      registry([
        workdir("docs", base, { read_only: true, description: "Docs" }),
        workdir("proj", base, { binary_transfer_enabled: true, agent_mode: "workspace-write", agent_runtimes: ["codex", "acp-x"] }),
      ]),
    );
    expect(svc.listWorkdirs()).toEqual({
      workdirs: [
        { alias: "docs", description: "Docs", access: "read-only", binary_transfer: false, agent_mode: "disabled", agent_runtimes: [] },
        { alias: "proj", description: null, access: "read-write", binary_transfer: true, agent_mode: "workspace-write", agent_runtimes: ["codex", "acp-x"] },
      ],
    });
    expect(JSON.stringify(svc.listWorkdirs())).not.toContain(base);
  });

  test("limits() publishes defaults clamped to maxima and the largest max_read_lines", () => {
    const base = tempDir();
    const svc = createFileService(
      registry([workdir("a", base, { max_read_lines: 120 }), workdir("b", base, { max_read_lines: 900 })], {
        default_list_limit: 7,
        max_list_entries: 5,
        default_search_results: 50,
        max_search_results: 100,
        max_edits_per_call: 9,
      }),
    );
    expect(svc.limits()).toEqual({
      default_list_limit: 5,
      max_list_entries: 5,
      default_search_results: 50,
      max_search_results: 100,
      max_read_lines_default: 200,
      max_read_lines_max: 900,
      max_edits_per_call: 9,
      max_files_per_read: 32,
    });
  });

  test("per-workdir write limits are selected per call: N ok, N+1 WRITE_TOO_LARGE", async () => {
    const base = tempDir();
    fs.mkdirSync(path.join(base, "s"));
    fs.mkdirSync(path.join(base, "l"));
    const svc = createFileService(registry([workdir("small", path.join(base, "s"), { max_write_bytes: 8 }), workdir("large", path.join(base, "l"), { max_write_bytes: 16 })]));
    expect((await svc.createTextFile({ workdir: "small", path: "a", content: "x".repeat(8) })).bytes_written).toBe(8);
    await expectCode(svc.createTextFile({ workdir: "small", path: "b", content: "x".repeat(9) }), "WRITE_TOO_LARGE");
    expect((await svc.createTextFile({ workdir: "large", path: "b", content: "x".repeat(16) })).bytes_written).toBe(16);
    await expectCode(svc.createTextFile({ workdir: "large", path: "c", content: "x".repeat(17) }), "WRITE_TOO_LARGE");
    expect(fs.readdirSync(path.join(base, "s"))).toEqual(["a"]);
  });

  test("revisions: directory token moves with its entries; opaque format; no raw ids inside", async () => {
    const base = tempDir();
    const svc = createFileService(registry([workdir("w", base)]));
    fs.mkdirSync(path.join(base, "d"));
    const r1 = (await svc.statFile({ workdir: "w", path: "d" })).revision;
    expect((await svc.statFile({ workdir: "w", path: "d" })).revision).toBe(r1);
    await Bun.sleep(5);
    const c = await svc.createTextFile({ workdir: "w", path: "d/x", content: "1" });
    const r2 = (await svc.statFile({ workdir: "w", path: "d" })).revision;
    expect(r2).not.toBe(r1);
    await svc.deleteFile({ workdir: "w", path: "d/x", expected_revision: c.revision });
    expect((await svc.statFile({ workdir: "w", path: "d" })).revision).not.toBe(r2);
    const st = fs.statSync(path.join(base, "d"));
    expect(r1).toMatch(/^v1:[0-9a-f]{16}$/);
    expect(r1).not.toContain(String(st.ino));
    write(base, "same1.txt", "same");
    write(base, "same2.txt", "same");
    expect((await svc.statFile({ workdir: "w", path: "same1.txt" })).revision).not.toBe((await svc.statFile({ workdir: "w", path: "same2.txt" })).revision);
  });

  test("message shapes: `<workdir>:<path> — phrase`, WORKDIR_NOT_FOUND names only the alias", async () => {
    const base = tempDir();
    const svc = createFileService(registry([workdir("w", base)]));
    const e1 = await expectCode(svc.readTextFile({ workdir: "nope", path: "x" }), "WORKDIR_NOT_FOUND");
    expect(e1.message).toBe("'nope' is not a configured workdir");
    const e2 = await expectCode(svc.readTextFile({ workdir: "w", path: "a/b.txt" }), "PATH_NOT_FOUND");
    expect(e2.toText()).toBe("PATH_NOT_FOUND: w:a/b.txt — does not exist");
    const e3 = await expectCode(svc.readTextFile({ workdir: "w", path: "sub/../../x" }), "PATH_OUTSIDE_WORKDIR");
    expect(e3.message).toBe("w:sub/../../x — path escapes the workdir");
  });
});
