// The writers' directory lock on Windows, end to end: two serverfs-windows-x64.exe serve
// processes over one workdir, each making guarded appends to one file; every acknowledged append
// is there exactly once. The lock lives in <state_dir>\locks\dirs (LockFileEx on a lock file
// named by the directory's identity), never in the workdir; a holder of that same lock makes an
// edit wait and answer FILE_BUSY, and once it lets go the edit goes through. Runs on Windows and
// in the Windows lane under Wine; skips elsewhere because the executable exists only on Windows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fsNative } from "../../platform/fs/native.ts";
import { callTool, connectWindowsServe, removeTree } from "../support/windows-serve.ts";

const onWindows = process.platform === "win32";
const SERVES = 2;
const PER_SERVE = 10;
/**
 * Answers after which the client reads again and retries. Under Wine 8 a rename cannot replace a
 * file someone has open (no POSIX rename semantics, platform/fs/windows.ts renameHandle), so an
 * edit that meets the other serve's read of the file is refused with ACCESS_DENIED and changes
 * nothing (the final exact comparison would see it if it had).
 */
const underWine = onWindows && (await import("../../platform/fs/windows.ts")).underWine();
const RACE_LOST = new Set(["REVISION_CONFLICT", "FILE_BUSY", ...(underWine ? ["ACCESS_DENIED"] : [])]);

let base = "";
let root = "";
let lockFiles = "";
let clients: Client[] = [];

async function ask(c: Client, name: string, args: Record<string, unknown>): Promise<{ ok: boolean; sc: Record<string, unknown> }> {
  const res = await callTool(c, name, { workdir: "w", ...args });
  return { ok: res.isError !== true, sc: res.structuredContent as Record<string, unknown> };
}

describe.skipIf(!onWindows)("guarded writers on Windows (needs Windows or the Wine lane)", () => {
  beforeAll(async () => {
    base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "serverfs-winwriters-")));
    root = path.join(base, "w");
    fs.mkdirSync(root);
    const state = path.join(base, "state");
    lockFiles = path.join(state, "locks", "dirs");
    const config = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      config,
      [
        "[server]",
        `state_dir = ${JSON.stringify(state)}`,
        "[limits]",
        "file_lock_wait_ms = 300",
        "[[workdirs]]",
        'alias = "w"',
        `path = ${JSON.stringify(root)}`,
        "read_only = false",
        "",
      ].join("\n"),
    );
    clients = await Promise.all(Array.from({ length: SERVES }, (_, i) => connectWindowsServe(`windows-writer-${i}`, ["--config", config], base, base)));
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    if (base !== "") removeTree(base);
  });

  test("2 serves x 10 guarded appends: every acknowledged line there exactly once, no lock file in the workdir", async () => {
    fs.writeFileSync(path.join(root, "log.txt"), "start\n");
    const acknowledged: string[] = [];
    await Promise.all(
      clients.map(async (c, w) => {
        for (let n = 0; n < PER_SERVE; n++) {
          const line = `w${w}-${n}`;
          for (let attempt = 0; ; attempt++) {
            if (attempt > 5_000) throw new Error(`${line}: no progress`);
            const read = await ask(c, "read_text_file", { path: "log.txt" });
            if (!read.ok) {
              if (read.sc.code === "FILE_CHANGED_DURING_READ") continue;
              throw new Error(`read_text_file: unexpected ${String(read.sc.code)}`);
            }
            const text = String(read.sc.content);
            const edit = await ask(c, "edit_text_file", { path: "log.txt", expected_revision: read.sc.revision, edits: [{ old_text: text, new_text: `${text}${line}\n` }] });
            if (edit.ok) {
              acknowledged.push(line);
              break;
            }
            if (!RACE_LOST.has(String(edit.sc.code))) throw new Error(`edit_text_file: unexpected ${String(edit.sc.code)}`);
          }
        }
      }),
    );
    expect(acknowledged.length).toBe(SERVES * PER_SERVE);
    const lines = fs.readFileSync(path.join(root, "log.txt"), "utf8").split("\n").slice(1, -1);
    expect(lines.sort()).toEqual(acknowledged.sort());
    expect(fs.readdirSync(root)).toEqual(["log.txt"]);
    expect(fs.readdirSync(lockFiles).every((n) => n.endsWith(".lock"))).toBe(true);
  }, 300_000);

  test("while another process holds the directory's lock an edit answers FILE_BUSY and changes nothing; then it applies", async () => {
    fs.mkdirSync(path.join(root, "held"));
    fs.writeFileSync(path.join(root, "held", "f.txt"), "one\n");
    const stat = await ask(clients[0]!, "stat_file", { path: "held/f.txt" });
    const native = fsNative();
    const dirFd = native.openRoot(path.join(root, "held"));
    try {
      const lock = native.tryLockDirectory(dirFd, lockFiles);
      expect(lock).not.toBeNull();
      const edit = { path: "held/f.txt", expected_revision: stat.sc.revision, edits: [{ old_text: "one", new_text: "two" }] };
      const busy = await ask(clients[0]!, "edit_text_file", edit);
      expect(busy.sc.code).toBe("FILE_BUSY");
      expect(fs.readFileSync(path.join(root, "held", "f.txt"), "utf8")).toBe("one\n");
      // readers never wait on it
      expect((await ask(clients[1]!, "read_text_file", { path: "held/f.txt" })).ok).toBe(true);
      lock!.release();
      const done = await ask(clients[0]!, "edit_text_file", edit);
      expect(done.ok).toBe(true);
      expect(fs.readFileSync(path.join(root, "held", "f.txt"), "utf8")).toBe("two\n");
    } finally {
      fs.closeSync(dirFd);
    }
  }, 120_000);
});
