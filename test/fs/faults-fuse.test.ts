// Real filesystem faults at chosen steps, through a real `serverfs serve` over MCP stdio: the
// workdir lives on a FUSE passthrough (test/fixtures/faultfs) that fails one operation on chosen
// files with EIO, ENOSPC, EDQUOT, EROFS, EACCES or EPERM. Each mutation gets its exact code, leaves
// the directory's entries, their bytes and metadata exactly as they were (no temp file), names only
// the caller's path, and once the fault is cleared the very same request (same expected revision)
// succeeds on the same serve. Reads of a file that fails with EIO answer IO_ERROR.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorCode, ok } from "../mcp/helpers.ts";
import { bareEnv, connectServe, type ServeClient } from "../support/mcp.ts";
import { tempDir } from "../support/temp.ts";
import { dirSnapshot } from "./disk-snapshot.ts";
import { faultFsUnavailable, mountFaultFs, type FaultFs, type FaultRule } from "./faultfs.ts";

// real processes and mounts on a shared 2-core machine: a ceiling, not a timing assertion
setDefaultTimeout(60_000);

const skip = faultFsUnavailable();
if (skip !== null) console.warn(`faults-fuse: skipped: ${skip}`);

const TEMPS = "/w/.serverfs-tmp-*";
let base = "";
let ffs: FaultFs | null = null;
let serve: ServeClient | null = null;
let disk = "";

beforeAll(async () => {
  if (skip !== null) return;
  base = tempDir("sfs-faults-");
  ffs = await mountFaultFs(base);
  disk = path.join(ffs.backing, "w");
  fs.mkdirSync(path.join(disk, "empty"), { recursive: true });
  fs.writeFileSync(path.join(disk, "keep.txt"), "original\nsecond line\n");
  fs.writeFileSync(path.join(disk, "bin.dat"), Buffer.from([0, 1, 2, 3, 255]));
  fs.writeFileSync(path.join(disk, "doomed.txt"), "delete me\n");
  fs.writeFileSync(path.join(disk, "bad.txt"), "a file whose reads fail\n");
  fs.chmodSync(path.join(disk, "keep.txt"), 0o640);
  // enough files for several search batches, so both scan threads meet failing files
  fs.mkdirSync(path.join(disk, "many"));
  for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(disk, "many", `f-${String(i).padStart(3, "0")}.txt`), i % 100 === 7 ? "a needle here\n" : "nothing\n");
  const toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(toml, `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(path.join(ffs.mount, "w"))}\nread_only = false\nbinary_transfer_enabled = true\n`);
  serve = await connectServe({ args: ["--config", toml], cwd: base, env: bareEnv(base) });
}, 60_000);

afterAll(async () => {
  await serve?.close();
  await ffs?.close();
}, 60_000);

function sc(r: CallToolResult): { code: string; message: string } {
  return r.structuredContent as { code: string; message: string };
}

async function revisionOf(p: string): Promise<string> {
  return ok<{ revision: string }>(await serve!.call("stat_file", { workdir: "w", path: p })).revision;
}

/**
 * The fault `rule` makes `tool(args)` answer `code` and leaves the workdir's directory as it was;
 * without the fault the same request succeeds. Returns the refusal's message.
 */
async function refusedThenServed(rule: FaultRule, tool: string, args: Record<string, unknown>, code: string): Promise<string> {
  const before = dirSnapshot(disk);
  await ffs!.rules([rule]);
  const refused = await serve!.call(tool, { workdir: "w", ...args });
  await ffs!.rules([]);
  expect({ tool, rule: rule.op, code: errorCode(refused) }).toEqual({ tool, rule: rule.op, code });
  expect(dirSnapshot(disk)).toEqual(before);
  const message = sc(refused).message;
  expect(message).not.toContain(base);
  expect(message).not.toContain(".serverfs-tmp");
  ok(await serve!.call(tool, { workdir: "w", ...args }));
  return message;
}

describe.skipIf(skip !== null)("filesystem faults on a FUSE mount, through a real serve", () => {
  test("edit_text_file: EIO at write, fsync or rename is IO_ERROR; ENOSPC and EDQUOT are NO_SPACE_LEFT; EROFS, EACCES, EPERM", async () => {
    const cases: [FaultRule, string][] = [
      [{ op: "write", path: TEMPS, errno: "EIO" }, "IO_ERROR"],
      [{ op: "fsync", path: TEMPS, errno: "EIO" }, "IO_ERROR"],
      [{ op: "rename", path: "/w/keep.txt", errno: "EIO" }, "IO_ERROR"],
      [{ op: "write", path: TEMPS, errno: "ENOSPC" }, "NO_SPACE_LEFT"],
      [{ op: "create", path: TEMPS, errno: "EDQUOT" }, "NO_SPACE_LEFT"],
      [{ op: "create", path: TEMPS, errno: "EROFS" }, "READ_ONLY_FILESYSTEM"],
      [{ op: "create", path: TEMPS, errno: "EACCES" }, "ACCESS_DENIED"],
      [{ op: "rename", path: "/w/keep.txt", errno: "EPERM" }, "ACCESS_DENIED"],
    ];
    for (const [i, [rule, code]] of cases.entries()) {
      const edit = { path: "keep.txt", expected_revision: await revisionOf("keep.txt"), edits: [{ old_text: i === 0 ? "original" : `round ${i - 1}`, new_text: `round ${i}` }] };
      const message = await refusedThenServed(rule, "edit_text_file", edit, code);
      if (i === 0) expect(message).toBe("w:keep.txt — the filesystem reported an I/O error; nothing was changed");
    }
    expect(fs.readFileSync(path.join(disk, "keep.txt"), "utf8")).toBe(`round ${cases.length - 1}\nsecond line\n`);
    expect(fs.statSync(path.join(disk, "keep.txt")).mode & 0o777).toBe(0o640);
  });

  test("a failed rename over a file that is open elsewhere leaves the file as it was", async () => {
    // libfuse hides an open rename target before renaming over it; a rename that then fails must
    // not have hidden it (once a flaky loss in this fixture, whenever libfuse had not yet seen the
    // last close of the file before the rename arrived). Holding it open makes that certain.
    const held = fs.openSync(path.join(ffs!.mount, "w", "keep.txt"), "r");
    try {
      for (const errno of ["EIO", "EPERM"] as const) {
        const text = fs.readFileSync(path.join(disk, "keep.txt"), "utf8");
        const first = text.split("\n")[0]!;
        const edit = { path: "keep.txt", expected_revision: await revisionOf("keep.txt"), edits: [{ old_text: first, new_text: `${first} held` }] };
        await refusedThenServed({ op: "rename", path: "/w/keep.txt", errno }, "edit_text_file", edit, errno === "EIO" ? "IO_ERROR" : "ACCESS_DENIED");
        expect(fs.readFileSync(path.join(disk, "keep.txt"), "utf8")).toBe(text.replace(first, `${first} held`));
      }
    } finally {
      fs.closeSync(held);
    }
  });

  test("create_text_file and upload_binary_file (create and overwrite)", async () => {
    let n = 0;
    for (const [rule, code] of [
      [{ op: "write", path: TEMPS, errno: "ENOSPC" }, "NO_SPACE_LEFT"],
      [{ op: "link", path: "/w/new-*", errno: "EIO" }, "IO_ERROR"],
      [{ op: "create", path: TEMPS, errno: "EPERM" }, "ACCESS_DENIED"],
    ] as [FaultRule, string][]) {
      const message = await refusedThenServed(rule, "create_text_file", { path: `new-${n}.txt`, content: "fresh\n" }, code);
      expect(message).toStartWith(`w:new-${n}.txt — `);
      n++;
    }
    await refusedThenServed({ op: "fsync", path: TEMPS, errno: "ENOSPC" }, "upload_binary_file", { path: "up.bin", data_base64: "AAEC" }, "NO_SPACE_LEFT");
    const overwrite = { path: "bin.dat", data_base64: Buffer.alloc(300 * 1024, 7).toString("base64"), overwrite: true, expected_revision: await revisionOf("bin.dat") };
    // the second 128 KiB piece fails: the first already reached the temp
    await refusedThenServed({ op: "write", path: TEMPS, errno: "EIO", min_offset: 128 * 1024 }, "upload_binary_file", overwrite, "IO_ERROR");
    expect(fs.readFileSync(path.join(disk, "bin.dat")).equals(Buffer.alloc(300 * 1024, 7))).toBe(true);
  });

  test("delete_file, create_directory, delete_directory", async () => {
    await refusedThenServed({ op: "unlink", path: "/w/doomed.txt", errno: "EIO" }, "delete_file", { path: "doomed.txt", expected_revision: await revisionOf("doomed.txt") }, "IO_ERROR");
    expect(fs.existsSync(path.join(disk, "doomed.txt"))).toBe(false);
    await refusedThenServed({ op: "mkdir", path: "/w/made", errno: "ENOSPC" }, "create_directory", { path: "made" }, "NO_SPACE_LEFT");
    await refusedThenServed({ op: "rmdir", path: "/w/empty", errno: "EROFS" }, "delete_directory", { path: "empty", expected_revision: await revisionOf("empty") }, "READ_ONLY_FILESYSTEM");
  });

  test("search_text skips files whose reads fail, counts them in unreadable, and finds them again once they work", async () => {
    const search = async () =>
      ok<{ matches: { path: string }[]; truncated: boolean; unreadable: number }>(await serve!.call("search_text", { workdir: "w", path: "many", query: "needle", limit: 100 }));
    const all = await search();
    expect(all.matches.map((m) => m.path)).toEqual([7, 107, 207].map((i) => `many/f-${String(i).padStart(3, "0")}.txt`));
    expect(all.unreadable).toBe(0);
    // EIO on reads of one matching file and two others, spread over the walk (more than one
    // search batch); no read permission on one more
    await ffs!.rules([
      { op: "read", path: "/w/many/f-107.txt", errno: "EIO" },
      { op: "read", path: "/w/many/f-[12]50.txt", errno: "EIO" },
      { op: "open", path: "/w/many/f-299.txt", errno: "EACCES" },
    ]);
    try {
      const some = await search();
      expect(some.matches.map((m) => m.path)).toEqual([7, 207].map((i) => `many/f-${String(i).padStart(3, "0")}.txt`));
      expect({ unreadable: some.unreadable, truncated: some.truncated }).toEqual({ unreadable: 4, truncated: false });
    } finally {
      await ffs!.rules([]);
    }
    expect(await search()).toEqual(all);
  });

  test("a directory that cannot be read: IO_ERROR when it is the one asked for, skipped inside a walk", async () => {
    await ffs!.rules([{ op: "readdir", path: "/w/many", errno: "EIO" }]);
    try {
      for (const [tool, args] of [
        ["list_directory", { path: "many" }],
        ["find_files", { path: "many", pattern: "*" }],
        ["directory_tree", { path: "many" }],
        ["search_text", { path: "many", query: "needle" }],
      ] as const) {
        const r = await serve!.call(tool, { workdir: "w", ...args });
        expect({ tool, code: errorCode(r), message: sc(r).message }).toEqual({ tool, code: "IO_ERROR", message: "w:many — the filesystem reported an I/O error" });
      }
      const found = ok<{ matches: { path: string }[] }>(await serve!.call("find_files", { workdir: "w", pattern: "*.txt" }));
      expect(found.matches.map((m) => m.path).filter((p) => p.startsWith("many/"))).toEqual([]);
      expect(found.matches.map((m) => m.path)).toContain("keep.txt");
    } finally {
      await ffs!.rules([]);
    }
    expect(ok<{ returned: number }>(await serve!.call("list_directory", { workdir: "w", path: "many", limit: 500 })).returned).toBe(300);
  });

  test("reads of a file whose reads fail with EIO answer IO_ERROR, and serve again once they work", async () => {
    await ffs!.rules([{ op: "read", path: "/w/bad.txt", errno: "EIO" }]);
    try {
      expect(errorCode(await serve!.call("read_text_file", { workdir: "w", path: "bad.txt" }))).toBe("IO_ERROR");
      expect(errorCode(await serve!.call("read_text_file", { workdir: "w", path: "bad.txt", tail_lines: 1 }))).toBe("IO_ERROR");
      expect(errorCode(await serve!.call("download_binary_file", { workdir: "w", path: "bad.txt" }))).toBe("IO_ERROR");
      const many = ok<{ files: { path: string; result: unknown; error: { code: string; message: string } | null }[] }>(
        await serve!.call("read_multiple_files", { workdir: "w", paths: ["keep.txt", "bad.txt"] }),
      );
      expect(many.files.map((f) => [f.path, f.error?.code ?? "ok"])).toEqual([["keep.txt", "ok"], ["bad.txt", "IO_ERROR"]]);
      expect(many.files[1]!.error!.message).toBe("w:bad.txt — the filesystem reported an I/O error");
      await ffs!.rules([{ op: "open", path: "/w/bad.txt", errno: "EIO" }]);
      expect(errorCode(await serve!.call("read_text_file", { workdir: "w", path: "bad.txt" }))).toBe("IO_ERROR");
    } finally {
      await ffs!.rules([]);
    }
    expect(ok<{ content: string }>(await serve!.call("read_text_file", { workdir: "w", path: "bad.txt" })).content).toBe("a file whose reads fail\n");
  });
});
