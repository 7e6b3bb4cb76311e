// With the Agent Bridge enabled, mutations from a real `serve` process take the Bridge's
// writer lease: no lock file → AGENT_LOCK_UNAVAILABLE, lock held by another process →
// WORKDIR_BUSY, recovery guard present → WORKDIR_RECOVERY_REQUIRED; reads never wait on it.
// The lease comes first and the directory lock second: with both held elsewhere the answer is
// WORKDIR_BUSY, and a mutation that waited out the directory lock (FILE_BUSY) left the lease free.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { fsNative } from "../../platform/fs/native.ts";
import { leases } from "../../platform/index.ts";
import { leaseFiles } from "../../src/bridge/deployment.ts";
import { loadRegistry } from "../../src/config/load.ts";
import { bareEnv, connectServe } from "../support/mcp.ts";
import { removeDir, tempDir } from "./helpers.ts";

// a real serve process started from source on a loaded machine: a ceiling, not a timing assertion
setDefaultTimeout(60_000);

let base: string;
beforeAll(() => {
  base = tempDir();
  fs.mkdirSync(path.join(base, "state"));
  fs.mkdirSync(path.join(base, "w"));
});
afterAll(() => removeDir(base));

test("serve mutations honour the Agent Bridge writer lease", async () => {
  const toml = path.join(base, "serverfs.toml");
  fs.writeFileSync(
    toml,
    [
      "[server]",
      `state_dir = ${JSON.stringify(path.join(base, "state"))}`,
      "[limits]",
      "file_lock_wait_ms = 200",
      "[[workdirs]]",
      'alias = "w"',
      `path = ${JSON.stringify(path.join(base, "w"))}`,
      "read_only = false",
      "[agent]",
      "enabled = true",
      "",
    ].join("\n"),
  );
  const { registry } = await loadRegistry({ configFile: toml });
  const { lockFile, guardFile } = leaseFiles(registry, "w");

  const { client } = await connectServe({ args: ["--config", toml], cwd: base, env: bareEnv(base), clientName: "lease", listTools: false });
  const create = async (name: string) => {
    const res = (await client.callTool({ name: "create_text_file", arguments: { workdir: "w", path: name, content: "x" } })) as CallToolResult;
    return res.isError ? (res.structuredContent as { code: string }).code : "ok";
  };
  try {
    expect(await create("a.txt")).toBe("AGENT_LOCK_UNAVAILABLE");

    fs.mkdirSync(path.dirname(lockFile), { recursive: true });
    fs.writeFileSync(lockFile, "");
    const held = leases().tryAcquire(lockFile);
    expect(held).not.toBeNull();
    expect(await create("b.txt")).toBe("WORKDIR_BUSY");
    // move_file takes the same lease: nothing moves while another process holds it
    fs.writeFileSync(path.join(base, "w", "m.txt"), "m");
    const st = (await client.callTool({ name: "stat_file", arguments: { workdir: "w", path: "m.txt" } })) as CallToolResult;
    const mv = (await client.callTool({
      name: "move_file",
      arguments: { workdir: "w", source: "m.txt", destination: "moved.txt", expected_revision: (st.structuredContent as { revision: string }).revision },
    })) as CallToolResult;
    expect((mv.structuredContent as { code: string }).code).toBe("WORKDIR_BUSY");
    fs.rmSync(path.join(base, "w", "m.txt"));
    // Reads do not take the lease.
    const list = (await client.callTool({ name: "list_directory", arguments: { workdir: "w" } })) as CallToolResult;
    expect(list.isError).toBeFalsy();
    held!.release();

    fs.mkdirSync(path.dirname(guardFile), { recursive: true });
    fs.writeFileSync(guardFile, "");
    expect(await create("c.txt")).toBe("WORKDIR_RECOVERY_REQUIRED");
    fs.rmSync(guardFile);

    expect(await create("d.txt")).toBe("ok");
    expect(fs.readdirSync(path.join(base, "w"))).toEqual(["d.txt"]);

    // lease first, directory lock second
    const st2 = (await client.callTool({ name: "stat_file", arguments: { workdir: "w", path: "d.txt" } })) as CallToolResult;
    const edit = async () => {
      const res = (await client.callTool({
        name: "edit_text_file",
        arguments: { workdir: "w", path: "d.txt", expected_revision: (st2.structuredContent as { revision: string }).revision, edits: [{ old_text: "x", new_text: "y" }] },
      })) as CallToolResult;
      return res.isError ? (res.structuredContent as { code: string }).code : "ok";
    };
    const native = fsNative();
    const rootFd = native.openRoot(path.join(base, "w"));
    try {
      const dirLock = native.tryLockDirectory(rootFd, path.join(base, "state", "locks", "dirs"));
      expect(dirLock).not.toBeNull();
      const lease = leases().tryAcquire(lockFile);
      expect(await edit()).toBe("WORKDIR_BUSY");
      lease!.release();
      expect(await edit()).toBe("FILE_BUSY");
      // serve let go of the lease it held while it waited
      const free = leases().tryAcquire(lockFile);
      expect(free).not.toBeNull();
      free!.release();
      dirLock!.release();
    } finally {
      fs.closeSync(rootFd);
    }
    expect(await edit()).toBe("ok");
    expect(fs.readFileSync(path.join(base, "w", "d.txt"), "utf8")).toBe("y");
  } finally {
    await client.close();
  }
});
