// The writers' directory lock as real `serve` processes meet it (docs/security.md, "Concurrent
// writers"): while another process holds a directory's lock, every guarded mutation there waits
// [limits] file_lock_wait_ms and answers FILE_BUSY with nothing changed, while reads and dry runs
// never wait; once the holder lets go the same call applies. A serve process SIGKILLed while it
// holds the lock (caught mid-edit: stopped, seen holding it, killed) blocks nobody: the next
// writer's edit goes through and the file is whole, the old bytes or the new, never a mix.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import path from "node:path";
import { fsNative } from "../../platform/fs/native.ts";
import { bareEnv, connectServe, type ServeClient } from "../support/mcp.ts";
import { removeDir, tempDir } from "./helpers.ts";

// serve starts from source on a loaded machine: a ceiling, not a timing assertion
setDefaultTimeout(120_000);

const native = fsNative();
let base: string;
let root: string;
let toml: string;
let lockFiles: string;
const started: ServeClient[] = [];

async function serve(name: string): Promise<ServeClient> {
  const c = await connectServe({ args: ["--config", toml], cwd: base, env: bareEnv(base), clientName: name });
  started.push(c);
  return c;
}

async function ask(c: ServeClient, name: string, args: Record<string, unknown>): Promise<{ ok: boolean; sc: Record<string, unknown> }> {
  const res: CallToolResult = await c.call(name, { workdir: "w", ...args });
  return { ok: res.isError !== true, sc: res.structuredContent as Record<string, unknown> };
}

/** The writers' lock of `dir` held by this test process, released by the returned function. */
function holdLock(dir: string): () => void {
  const fd = native.openRoot(dir);
  const lock = native.tryLockDirectory(fd, lockFiles);
  if (lock === null) {
    fs.closeSync(fd);
    throw new Error("the lock is already held");
  }
  return () => {
    lock.release();
    fs.closeSync(fd);
  };
}

beforeAll(() => {
  base = tempDir("serverfs-dirlock-serve-");
  root = path.join(base, "w");
  fs.mkdirSync(root);
  const state = path.join(base, "state");
  lockFiles = path.join(state, "locks", "dirs");
  toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(
    toml,
    [
      "[server]",
      `state_dir = ${JSON.stringify(state)}`,
      "[limits]",
      "file_lock_wait_ms = 200",
      "[[workdirs]]",
      'alias = "w"',
      `path = ${JSON.stringify(root)}`,
      "read_only = false",
      "binary_transfer_enabled = true",
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  await Promise.all(started.map((c) => c.close().catch(() => {})));
  removeDir(base);
});

describe("a held directory lock", () => {
  test("guarded mutations answer FILE_BUSY and change nothing; reads and dry runs do not wait; released, they apply", async () => {
    const c = await serve("busy");
    const held = path.join(root, "held");
    fs.mkdirSync(held);
    fs.mkdirSync(path.join(root, "free"));
    fs.writeFileSync(path.join(held, "f.txt"), "one\n");
    fs.writeFileSync(path.join(held, "gone.txt"), "bye\n");
    fs.writeFileSync(path.join(held, "blob.bin"), "old");
    fs.writeFileSync(path.join(root, "free", "m.txt"), "m\n");
    fs.mkdirSync(path.join(held, "empty"));
    const revision = async (p: string) => String((await ask(c, "stat_file", { path: p })).sc.revision);
    const calls: [string, Record<string, unknown>][] = [
      ["edit_text_file", { path: "held/f.txt", expected_revision: await revision("held/f.txt"), edits: [{ old_text: "one", new_text: "two" }] }],
      ["delete_file", { path: "held/gone.txt", expected_revision: await revision("held/gone.txt") }],
      ["upload_binary_file", { path: "held/blob.bin", data_base64: Buffer.from("new").toString("base64"), overwrite: true, expected_revision: await revision("held/blob.bin") }],
      ["delete_directory", { path: "held/empty", expected_revision: await revision("held/empty") }],
      // the destination's directory is held: the source's is free, the move still waits
      ["move_file", { source: "free/m.txt", destination: "held/m.txt", expected_revision: await revision("free/m.txt") }],
    ];
    const before = fs.readdirSync(root, { recursive: true }).sort();
    const release = holdLock(held);
    try {
      for (const [tool, args] of calls) expect([tool, (await ask(c, tool, args)).sc.code]).toEqual([tool, "FILE_BUSY"]);
      expect(fs.readdirSync(root, { recursive: true }).sort()).toEqual(before);
      expect(fs.readFileSync(path.join(held, "f.txt"), "utf8")).toBe("one\n");
      expect(fs.readFileSync(path.join(held, "blob.bin"), "utf8")).toBe("old");
      // readers and a dry run never take the lock
      expect((await ask(c, "read_text_file", { path: "held/f.txt" })).sc.content).toBe("one\n");
      expect((await ask(c, "list_directory", { path: "held" })).ok).toBe(true);
      const dry = await ask(c, "edit_text_file", { ...calls[0]![1], dry_run: true });
      expect([dry.ok, dry.sc.edited]).toEqual([true, false]);
      // create never replaces anything, so it takes no lock either
      expect((await ask(c, "create_text_file", { path: "held/new.txt", content: "n" })).ok).toBe(true);
    } finally {
      release();
    }
    for (const [tool, args] of calls) expect([tool, (await ask(c, tool, args)).ok]).toEqual([tool, true]);
    expect(fs.readdirSync(held).sort()).toEqual(["blob.bin", "f.txt", "m.txt", "new.txt"]);
    expect(fs.readFileSync(path.join(held, "f.txt"), "utf8")).toBe("two\n");
    expect(fs.readFileSync(path.join(held, "blob.bin"), "utf8")).toBe("new");
  });

  // SIGSTOP/SIGCONT catch the holder inside its locked section; Windows has neither signal.
  test.skipIf(process.platform === "win32")("a serve process SIGKILLed while it holds the lock blocks no one: the next writer's edit applies", async () => {
    const victim = await serve("victim");
    const next = await serve("next");
    const dir = path.join(root, "killed");
    fs.mkdirSync(dir);
    // A large edit (every byte replaced) keeps the victim inside its locked section long enough
    // to be caught there; it flips the whole file between all-'a' and all-'b'.
    const size = 512 * 1024;
    fs.writeFileSync(path.join(dir, "big.txt"), "a".repeat(size));
    const pid = victim.transport.pid!;
    // the transport closes once the process is reaped: every thread gone, every descriptor closed
    // (a zombie leader alone proves nothing: its other threads may still be exiting)
    const reaped = new Promise<void>((resolve) => {
      victim.client.onclose = () => resolve();
    });
    let caught = false;
    for (let round = 0; !caught; round++) {
      if (round > 500) throw new Error("the victim was never caught holding the lock");
      const text = fs.readFileSync(path.join(dir, "big.txt"), "utf8");
      const [from, to] = text[0] === "a" ? ["a", "b"] : ["b", "a"];
      const rev = String((await ask(next, "stat_file", { path: "killed/big.txt" })).sc.revision);
      let settled = false;
      // (once the victim is killed this call never answers: its transport just closes)
      const edit = ask(victim, "edit_text_file", { path: "killed/big.txt", expected_revision: rev, edits: [{ old_text: from, new_text: to, expected_count: size }] })
        .catch(() => ({ ok: false, sc: { code: "SERVE_GONE" } }))
        .finally(() => {
          settled = true;
        });
      while (!settled && !caught) {
        process.kill(pid, "SIGSTOP");
        const fd = native.openRoot(dir);
        const probe = native.tryLockDirectory(fd, lockFiles);
        if (probe === null) {
          // stopped while holding it: no one else writes here
          process.kill(pid, "SIGKILL");
          caught = true;
        } else {
          probe.release();
          process.kill(pid, "SIGCONT");
        }
        fs.closeSync(fd);
        await new Promise((r) => setImmediate(r));
      }
      if (!caught) expect((await edit).ok).toBe(true);
    }
    await reaped;
    const fd = native.openRoot(dir);
    const probe = native.tryLockDirectory(fd, lockFiles);
    fs.closeSync(fd);
    expect(probe).not.toBeNull();
    probe!.release();
    const text = fs.readFileSync(path.join(dir, "big.txt"), "utf8");
    expect(text.length).toBe(size);
    expect(text === "a".repeat(size) || text === "b".repeat(size)).toBe(true);
    const [from, to] = text[0] === "a" ? ["a", "b"] : ["b", "a"];
    const rev = String((await ask(next, "stat_file", { path: "killed/big.txt" })).sc.revision);
    const after = await ask(next, "edit_text_file", { path: "killed/big.txt", expected_revision: rev, edits: [{ old_text: from, new_text: to, expected_count: size }] });
    expect(after.ok).toBe(true);
    expect(fs.readFileSync(path.join(dir, "big.txt"), "utf8")).toBe(to.repeat(size));
  });
});
