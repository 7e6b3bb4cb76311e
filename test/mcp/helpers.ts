// Test helpers for the MCP layer: the real server (SDK v2) behind an SDK v1 Client over the SDK's
// in-memory transport (a 2025-era connection; test/bridge/mcp-eras.test.ts covers both eras over
// stdio), a logger whose sink collects the real JSON lines, and checks of both halves of a tool
// result. Temp dirs and registries come from test/support/.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { FsLimits, Registry, Workdir } from "../../src/config/types.ts";
import { createFileService } from "../../src/fs/index.ts";
import { createLogger } from "../../src/log.ts";
import { createMcpServer, type ServerfsMcp } from "../../src/mcp/server.ts";
import { registry, workdir } from "../support/registry.ts";
import { tempDir as supportTempDir } from "../support/temp.ts";

export { removeDir } from "../support/temp.ts";

export function tempDir(prefix = "serverfs-mcp-"): string {
  return supportTempDir(prefix);
}

export type WorkdirSpec = Partial<Workdir> & { alias: string; path: string };

/** Workdirs are read-only unless the spec says otherwise. */
export function makeRegistry(workdirs: WorkdirSpec[], limits: Partial<FsLimits> = {}): Registry {
  return registry(workdirs.map((w) => workdir(w.alias, w.path, { read_only: true, ...w })), limits);
}

export interface Harness {
  client: Client;
  mcp: ServerfsMcp;
  /** Every log line the server wrote, parsed. */
  logs: Record<string, unknown>[];
  /** The raw log text, for substring hygiene checks. */
  logText: () => string;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
  close: () => Promise<void>;
}

export async function connect(registry: Registry): Promise<Harness> {
  const lines: string[] = [];
  const logger = createLogger({ level: "DEBUG", sink: (line) => lines.push(line) });
  const files = createFileService(registry);
  const mcp = createMcpServer({ registry, files, logger });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "serverfs-test", version: "0" });
  const server = mcp.build();
  await server.connect(serverSide);
  await client.connect(clientSide);
  // Lets the client cache output-schema validators, as a real host does after tools/list.
  await client.listTools();
  return {
    client,
    mcp,
    get logs() {
      return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    logText: () => lines.join(""),
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: async () => {
      await client.close();
      await server.close();
      files.close();
    },
  };
}

/** The `CODE` of an error result, after checking both halves of the error shape agree. */
export function errorCode(result: CallToolResult): string {
  if (!result.isError) throw new Error(`expected an error result, got ${JSON.stringify(result.structuredContent)}`);
  const first = result.content[0];
  if (!first || first.type !== "text") throw new Error("error result without text content");
  const sc = result.structuredContent as { code: string; message: string };
  if (first.text !== `${sc.code}: ${sc.message}`) throw new Error(`text '${first.text}' does not mirror structuredContent`);
  return sc.code;
}

/** structuredContent of a success result, after checking the text mirror equals it. */
export function ok<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`expected success, got ${JSON.stringify(result.content)}`);
  const last = result.content[result.content.length - 1];
  if (!last || last.type !== "text") throw new Error("success result without text mirror");
  const mirrored = JSON.parse(last.text) as unknown;
  if (JSON.stringify(mirrored) !== JSON.stringify(result.structuredContent)) throw new Error("text mirror differs");
  return result.structuredContent as T;
}
