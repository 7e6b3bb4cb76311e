// cross_mounts = false and refuse_hardlinked_reads = true end to end: the real `serverfs serve`
// process, started in its own mount namespace (`unshare -m`) right after a tmpfs is mounted inside
// its workdir, driven by the SDK client over stdio. The codes reach the wire as coded tool errors
// and resource errors, never as INTERNAL_ERROR, and no host path appears in any answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { bareEnv, connectServe, type ServeClient } from "../support/mcp.ts";
import { BUN, CLI } from "../support/proc.ts";
import { removeDir, tempDir } from "./helpers.ts";

describe.skipIf(process.platform !== "linux")("mount and hard-link refusals through serve over stdio", () => {
  let base: string;
  let root: string;
  let client: Client;
  let serve: ServeClient;

  beforeAll(async () => {
    base = tempDir();
    root = path.join(base, "root");
    fs.mkdirSync(path.join(root, "mnt"), { recursive: true });
    fs.writeFileSync(path.join(root, "plain.txt"), "needle plain\n");
    fs.writeFileSync(path.join(base, "outside.txt"), "needle outside\n");
    fs.linkSync(path.join(base, "outside.txt"), path.join(root, "link.txt"));
    const config = path.join(base, "serverfs.toml");
    fs.writeFileSync(
      config,
      `[[workdirs]]\nalias = "w"\npath = ${JSON.stringify(root)}\ncross_mounts = false\nrefuse_hardlinked_reads = true\nbinary_transfer_enabled = true\n`,
    );
    const unshare = process.getuid?.() === 0 ? ["-m", "--propagation", "private"] : ["-rm", "--propagation", "private"];
    const script = 'mount -t tmpfs none "$1" && printf "needle mounted\\n" > "$1/f.txt" && exec "$2" "$3" serve --config "$4"';
    serve = await connectServe({
      spawn: { command: "unshare", args: [...unshare, "sh", "-c", script, "sh", path.join(root, "mnt"), BUN, CLI, config] },
      cwd: base,
      captureStderr: true,
      env: bareEnv(base),
      clientName: "fs-edges",
      listTools: false,
    });
    client = serve.client;
  });
  afterAll(async () => {
    await client.close();
    removeDir(base);
  });

  async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: { workdir: "w", ...args } })) as CallToolResult;
  }

  function expectRefused(res: CallToolResult, code: string, p: string): void {
    expect(res.isError).toBe(true);
    expect((res.structuredContent as { code: string }).code).toBe(code);
    const text = (res.content as { text: string }[])[0]!.text;
    expect(text.startsWith(`${code}: w:${p} — `)).toBe(true);
    expect(text).not.toContain(base);
  }

  test("through the mount point: every tool and the resource answer MOUNT_CROSSING_NOT_ALLOWED", async () => {
    expectRefused(await call("read_text_file", { path: "mnt/f.txt" }), "MOUNT_CROSSING_NOT_ALLOWED", "mnt/f.txt");
    expectRefused(await call("stat_file", { path: "mnt" }), "MOUNT_CROSSING_NOT_ALLOWED", "mnt");
    expectRefused(await call("list_directory", { path: "mnt" }), "MOUNT_CROSSING_NOT_ALLOWED", "mnt");
    expectRefused(await call("download_binary_file", { path: "mnt/f.txt" }), "MOUNT_CROSSING_NOT_ALLOWED", "mnt/f.txt");
    expectRefused(await call("search_text", { path: "mnt", query: "needle" }), "MOUNT_CROSSING_NOT_ALLOWED", "mnt");
    const err = (await client.readResource({ uri: "serverfs://w/mnt/f.txt" }).catch((e: unknown) => e)) as { data?: unknown };
    expect(err.data).toEqual({ code: "MOUNT_CROSSING_NOT_ALLOWED" });
  });

  test("the root lists and walks without the mount point", async () => {
    const list = await call("list_directory", {});
    expect((list.structuredContent as { entries: { name: string }[] }).entries.map((e) => e.name)).toEqual(["link.txt", "plain.txt"]);
    const found = await call("find_files", { pattern: "*" });
    expect((found.structuredContent as { matches: { path: string }[] }).matches.map((m) => m.path).sort()).toEqual(["link.txt", "plain.txt"]);
    const hits = await call("search_text", { query: "needle" });
    expect((hits.structuredContent as { matches: { path: string }[] }).matches.map((m) => m.path)).toEqual(["plain.txt"]);
  });

  test("a hard link to a file outside the workdir: content tools refuse it, stat describes it", async () => {
    expectRefused(await call("read_text_file", { path: "link.txt" }), "MULTIPLE_HARDLINKS_NOT_SUPPORTED", "link.txt");
    expectRefused(await call("download_binary_file", { path: "link.txt" }), "MULTIPLE_HARDLINKS_NOT_SUPPORTED", "link.txt");
    const err = (await client.readResource({ uri: "serverfs://w/link.txt" }).catch((e: unknown) => e)) as { data?: unknown };
    expect(err.data).toEqual({ code: "MULTIPLE_HARDLINKS_NOT_SUPPORTED" });
    const st = await call("stat_file", { path: "link.txt" });
    expect(st.isError).toBeFalsy();
    expect((st.structuredContent as { size: number }).size).toBe(15);
  });

  test("nothing changed on disk, nothing left mounted here, nothing leaked to stderr", () => {
    expect(fs.readdirSync(root).sort()).toEqual(["link.txt", "mnt", "plain.txt"]);
    expect(fs.readdirSync(path.join(root, "mnt"))).toEqual([]);
    expect(fs.readFileSync(path.join(base, "outside.txt"), "utf8")).toBe("needle outside\n");
    expect(fs.statSync(path.join(base, "outside.txt")).nlink).toBe(2);
    expect(serve.stderr()).not.toContain(base);
  });
});
