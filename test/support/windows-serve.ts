// What the Windows-lane tests share: the compiled Windows executable, a tree removal that works
// under Wine 8, and an MCP client on `serverfs-windows-x64.exe serve`. The lane runs these tests
// inside bun.exe under Wine (docs/platform.md, "Windows under Wine"), so the client is a Windows
// process talking to a Windows child, never a Linux pipe into Wine.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as path from "node:path";

export const REPO_ROOT = path.resolve(import.meta.dir, "../..");
export const WINDOWS_EXE = path.join(REPO_ROOT, "dist", "serverfs-windows-x64.exe");
/** The Wine-backed Unix symlink fixture (Wine follows them even under FILE_OPEN_REPARSE_POINT). */
export const WINE_LINKS_FIXTURE = path.join(REPO_ROOT, "test", "platform", "fixtures", "wine-links");

/** fs.rmSync's recursive mode fails with EFAULT under Wine 8: the product's own removal walks instead. */
export { removeTree } from "../../platform/fs/remove-tree.ts";

/**
 * An MCP client on `serverfs-windows-x64.exe serve <args>`. With `home`, the child's profile and
 * temp directories are that directory (a config-driven serve writes nothing elsewhere); without it
 * the child gets PATH only.
 */
export async function connectWindowsServe(name: string, args: string[], cwd: string, home?: string): Promise<Client> {
  if (!fs.existsSync(WINDOWS_EXE)) throw new Error(`${WINDOWS_EXE} is missing: run ./node_modules/.bin/bun build/compile.ts windows-x64`);
  const env: Record<string, string> =
    home === undefined
      ? { PATH: process.env.PATH ?? "" }
      : { PATH: process.env.PATH ?? "", SYSTEMROOT: process.env.SYSTEMROOT ?? "C:\\Windows", USERPROFILE: home, TEMP: home };
  const client = new Client({ name, version: "0" });
  await client.connect(new StdioClientTransport({ command: WINDOWS_EXE, args: ["serve", ...args], cwd, stderr: "pipe", env }));
  return client;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
