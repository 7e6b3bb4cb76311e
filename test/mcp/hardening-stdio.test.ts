// The hardening classes through the real `serverfs serve` process over stdio, as a host sends
// them: the amplifying edit is refused with its code and the same server keeps answering, a long
// legal edit does not hold up a read sent after it, directory-only paths and non-canonical base64
// are refused, and new content loses setuid/setgid. Each case checks the disk afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { errorCode, ok, removeDir, tempDir } from "./helpers.ts";

const ROOT = path.resolve(import.meta.dir, "../..");
const CLI = path.join(ROOT, "src/cli.ts");
let base: string;
let rw: string;
let client: Client;

beforeAll(async () => {
  base = tempDir();
  rw = path.join(base, "rw");
  fs.mkdirSync(rw);
  const toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(toml, `[[workdirs]]\nalias = "rw"\npath = ${JSON.stringify(rw)}\nread_only = false\nbinary_transfer_enabled = true\n`);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "serve", "--config", toml],
    cwd: base,
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base },
  });
  client = new Client({ name: "hardening-test", version: "0" });
  await client.connect(transport);
});
afterAll(async () => {
  await client.close();
  removeDir(base);
});

const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
const revisionOf = async (p: string) => ok<{ revision: string }>(await call("stat_file", { workdir: "rw", path: p })).revision;
const names = () => fs.readdirSync(rw).sort();

describe("serve over stdio: hardening", () => {
  test("the 4 KB edit that once grew serve by 2 GB is WRITE_TOO_LARGE, the file is untouched, the server answers on", async () => {
    const file = path.join(rw, "amp.txt");
    fs.writeFileSync(file, "a".repeat(524_288));
    const before = fs.statSync(file);
    const rev = await revisionOf("amp.txt");
    const [edit, listed] = await Promise.all([
      call("edit_text_file", { workdir: "rw", path: "amp.txt", expected_revision: rev, edits: [{ old_text: "a", new_text: "b".repeat(4000), expected_count: 524_288 }] }),
      call("list_workdirs", {}),
    ]);
    expect(errorCode(edit)).toBe("WRITE_TOO_LARGE");
    expect(ok<{ workdirs: unknown[] }>(listed).workdirs).toHaveLength(1);
    const doubling = Array.from({ length: 50 }, (_, i) => ({ old_text: "a", new_text: "aa", expected_count: 2 ** i }));
    expect(errorCode(await call("edit_text_file", { workdir: "rw", path: "amp.txt", expected_revision: rev, edits: doubling }))).toBe("WRITE_TOO_LARGE");
    const after = fs.statSync(file);
    expect([after.ino, after.size, after.mtimeMs, after.mode]).toEqual([before.ino, before.size, before.mtimeMs, before.mode]);
    expect(fs.readFileSync(file)).toEqual(Buffer.alloc(524_288, "a"));
    expect(names()).toEqual(["amp.txt"]);
    expect(await revisionOf("amp.txt")).toBe(rev);
  });

  test("a long legal edit does not hold up a read sent after it", async () => {
    fs.writeFileSync(path.join(rw, "big.txt"), "a".repeat(1_048_576));
    fs.writeFileSync(path.join(rw, "small.txt"), "quick\n");
    const rev = await revisionOf("big.txt");
    const edits = Array.from({ length: 10 }, (_, i) => ({ old_text: i % 2 === 0 ? "a" : "b", new_text: i % 2 === 0 ? "b" : "a", expected_count: 1_048_576 }));
    const order: string[] = [];
    const editing = call("edit_text_file", { workdir: "rw", path: "big.txt", expected_revision: rev, edits }).then((r) => {
      order.push("edit");
      return r;
    });
    await Bun.sleep(20);
    const read = await call("read_text_file", { workdir: "rw", path: "small.txt" });
    order.push("read");
    expect(ok<{ content: string }>(read).content).toBe("quick\n");
    expect(ok<{ bytes_after: number }>(await editing).bytes_after).toBe(1_048_576);
    expect(order).toEqual(["read", "edit"]);
    fs.rmSync(path.join(rw, "big.txt"));
    fs.rmSync(path.join(rw, "small.txt"));
  }, 120_000);

  test("create_text_file on newdir/ is INVALID_PATH and creates nothing; upload QR== is INVALID_BASE64", async () => {
    const before = names();
    expect(errorCode(await call("create_text_file", { workdir: "rw", path: "newdir/", content: "x" }))).toBe("INVALID_PATH");
    expect(errorCode(await call("upload_binary_file", { workdir: "rw", path: "newdir/", data_base64: "eA==" }))).toBe("INVALID_PATH");
    expect(errorCode(await call("upload_binary_file", { workdir: "rw", path: "q.bin", data_base64: "QR==" }))).toBe("INVALID_BASE64");
    expect(errorCode(await call("upload_binary_file", { workdir: "rw", path: "q.bin", data_base64: "QUJ=" }))).toBe("INVALID_BASE64");
    expect(names()).toEqual(before);
    expect(fs.existsSync(path.join(rw, "newdir"))).toBe(false);
  });

  test.skipIf(process.getuid?.() !== 0)("edit and upload-overwrite of a 06755 file leave 0755 (needs root to set the bits on a foreign-owned file)", async () => {
    const file = path.join(rw, "suid.sh");
    fs.writeFileSync(file, "echo one\n");
    fs.chownSync(file, 4321, 4321);
    fs.chmodSync(file, 0o6755);
    const edited = await call("edit_text_file", { workdir: "rw", path: "suid.sh", expected_revision: await revisionOf("suid.sh"), edits: [{ old_text: "one", new_text: "two" }] });
    expect(ok(edited).edited).toBe(true);
    expect(fs.statSync(file).mode & 0o7777).toBe(0o755);
    fs.chmodSync(file, 0o6755);
    const data = Buffer.from("echo three\n").toString("base64");
    const up = await call("upload_binary_file", { workdir: "rw", path: "suid.sh", data_base64: data, overwrite: true, expected_revision: await revisionOf("suid.sh") });
    expect(ok(up).replaced).toBe(true);
    const st = fs.statSync(file);
    expect([st.mode & 0o7777, st.uid, st.gid]).toEqual([0o755, 4321, 4321]);
    expect(fs.readFileSync(file, "utf8")).toBe("echo three\n");
  });
});
