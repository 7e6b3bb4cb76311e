// The SDK's MCP client over stdio to a real `serverfs serve` process (the real CLI), the way an
// assistant host connects.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { BUN, CLI } from "./proc.ts";

export interface ServeOptions {
  /** Arguments after `serverfs serve`. */
  args?: string[];
  /** Run this instead of `bun cli.ts serve <args>` (e.g. serve inside `unshare`). */
  spawn?: { command: string; args: string[] };
  cwd?: string;
  /** The child's whole environment (default: the SDK's safe inherited subset). */
  env?: Record<string, string>;
  /** Collect serve's stderr (default: ignore it). */
  captureStderr?: boolean;
  maxBufferSize?: number;
  clientName?: string;
  /** List tools once after connecting, so the client caches the output-schema validators (default true). */
  listTools?: boolean;
}

export interface ServeClient {
  client: Client;
  transport: StdioClientTransport;
  /** Everything serve wrote on stderr so far (empty unless captureStderr). */
  stderr(): string;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** A temp HOME and a bare PATH: what serve sees when a host starts it with a minimal environment. */
export function bareEnv(home: string): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
}

export async function connectServe(o: ServeOptions): Promise<ServeClient> {
  const spawn = o.spawn ?? { command: BUN, args: [CLI, "serve", ...(o.args ?? [])] };
  const transport = new StdioClientTransport({
    command: spawn.command,
    args: spawn.args,
    ...(o.cwd ? { cwd: o.cwd } : {}),
    ...(o.env ? { env: o.env } : {}),
    ...(o.maxBufferSize ? { maxBufferSize: o.maxBufferSize } : {}),
    stderr: o.captureStderr ? "pipe" : "ignore",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: o.clientName ?? "serverfs-test", version: "0" });
  await client.connect(transport);
  if (o.listTools ?? true) await client.listTools();
  return {
    client,
    transport,
    stderr: () => stderr,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}
