// Real MCP clients for `serverfs serve` over stdio, one interface for all of them: the SDK v1
// client (2025 era) and the SDK v2 client negotiating `legacy`, `auto` or a pin to 2026-07-28.
// SERVERFS_TEST_SERVE_BIN=dist/serverfs-linux-x64 runs the same suites against the compiled binary.
import { Client as ClientV2, type CallToolResult as ResultV2, type DiscoverResult } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import path from "node:path";
import type { Readable } from "node:stream";

const CLI = path.resolve(import.meta.dir, "../../src/cli.ts");

export function serveCommand(config: string): { command: string; args: string[] } {
  const bin = process.env.SERVERFS_TEST_SERVE_BIN;
  if (bin) return { command: path.resolve(bin), args: ["serve", "--config", config] };
  return { command: process.execPath, args: [CLI, "serve", "--config", config] };
}

export type Mode = "v1" | "legacy" | "auto" | "pin";
export const MODES: readonly Mode[] = ["v1", "legacy", "auto", "pin"];

export interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** The form answer a test's human gives: what `elicitation/create` (or an input_required round) returns. */
export type ElicitAnswer = { action: "accept"; content: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

export interface Session {
  mode: Mode;
  /** "legacy" | "modern" for the v2 client; "legacy" for v1 (it only speaks the 2025 era). */
  era: string;
  listTools(): Promise<Array<Record<string, unknown>>>;
  call(name: string, args?: Record<string, unknown>, opts?: { onprogress?: (p: { progress: number }) => void; signal?: AbortSignal; timeout?: number }): Promise<ToolResult>;
  templates(): Promise<Array<Record<string, unknown>>>;
  read(uri: string): Promise<Array<Record<string, unknown>>>;
  /** Every form the server showed, in order. */
  forms: Array<{ message: string; requestedSchema: Record<string, unknown> }>;
  /** serve's stderr (its JSON log lines), as collected so far. */
  stderr(): string;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** When set, the client declares form elicitation and answers each form with the next answer. */
  answers?: ElicitAnswer[];
  /**
   * `pin` only: start from the modern verdict an earlier `pin` session of this test file probed
   * (the SDK's `connect({ prior })`, as a host that caches verdicts does) instead of probing
   * again. Each probe is a whole extra serve process (the SDK's disposable stdio sibling), and
   * serve's discover result is the same under every configuration (fixed capabilities and
   * instructions). The suites about the negotiation itself (mcp-eras) always probe.
   */
  reuseVerdict?: boolean;
}

/** The discover result of this file's first probed `pin` session (see OpenOptions.reuseVerdict). */
let pinVerdict: DiscoverResult | undefined;

function collect(stream: Readable | null): () => string {
  const chunks: string[] = [];
  stream?.on("data", (c: Buffer) => chunks.push(c.toString("utf8")));
  return () => chunks.join("");
}

export async function open(mode: Mode, config: string, opts: OpenOptions = {}): Promise<Session> {
  const forms: Session["forms"] = [];
  const answer = (params: { message: string; requestedSchema: Record<string, unknown> }): ElicitAnswer => {
    forms.push({ message: params.message, requestedSchema: params.requestedSchema });
    const next = opts.answers?.shift();
    if (!next) throw new Error("the test gave no answer for this form");
    return next;
  };
  const capabilities = opts.answers ? { elicitation: { form: {} } } : {};
  const { command, args } = serveCommand(config);

  if (mode === "v1") {
    const transport = new StdioV1({ command, args, stderr: "pipe" });
    const stderr = collect(transport.stderr as Readable | null);
    const client = new ClientV1({ name: "serverfs-test-v1", version: "0" }, { capabilities });
    if (opts.answers) client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params as never) as never);
    await client.connect(transport);
    return {
      mode,
      era: "legacy",
      listTools: async () => (await client.listTools()).tools as Array<Record<string, unknown>>,
      call: async (name, a = {}, o = {}) => (await client.callTool({ name, arguments: a }, undefined, { ...o, timeout: o.timeout ?? 60_000 })) as ToolResult,
      templates: async () => (await client.listResourceTemplates()).resourceTemplates as Array<Record<string, unknown>>,
      read: async (uri) => (await client.readResource({ uri })).contents as Array<Record<string, unknown>>,
      forms,
      stderr,
      close: () => client.close(),
    };
  }

  const versionNegotiation = { mode: mode === "pin" ? ({ pin: "2026-07-28" } as const) : mode };
  const transport = new StdioV2({ command, args, stderr: "pipe" });
  const stderr = collect(transport.stderr as Readable | null);
  const client = new ClientV2({ name: `serverfs-test-${mode}`, version: "0" }, { capabilities, versionNegotiation });
  if (opts.answers) client.setRequestHandler("elicitation/create", (req) => answer(req.params as never) as never);
  if (mode === "pin" && opts.reuseVerdict && pinVerdict) await client.connect(transport, { prior: { kind: "modern", discover: pinVerdict } });
  else await client.connect(transport);
  if (mode === "pin") pinVerdict ??= client.getDiscoverResult();
  return {
    mode,
    era: String(client.getProtocolEra()),
    listTools: async () => (await client.listTools()).tools as unknown as Array<Record<string, unknown>>,
    call: async (name, a = {}, o = {}) => (await client.callTool({ name, arguments: a }, { ...o, timeout: o.timeout ?? 60_000 })) as ResultV2 as ToolResult,
    templates: async () => (await client.listResourceTemplates()).resourceTemplates as unknown as Array<Record<string, unknown>>,
    read: async (uri) => (await client.readResource({ uri })).contents as unknown as Array<Record<string, unknown>>,
    forms,
    stderr,
    close: () => client.close(),
  };
}

/** structuredContent of a success, after checking the text mirror equals it. */
export function ok(r: ToolResult): Record<string, unknown> {
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
  const last = r.content[r.content.length - 1];
  if (last?.type !== "text" || JSON.stringify(JSON.parse(last.text ?? "")) !== JSON.stringify(r.structuredContent)) {
    throw new Error("the text mirror differs from structuredContent");
  }
  return r.structuredContent as Record<string, unknown>;
}

/** The code of an error result, after checking its text is `CODE: message`. */
export function code(r: ToolResult): string {
  if (!r.isError) throw new Error(`expected an error, got ${JSON.stringify(r.structuredContent)}`);
  const sc = r.structuredContent as { code: string; message: string };
  if (r.content[0]?.text !== `${sc.code}: ${sc.message}`) throw new Error("error text does not mirror structuredContent");
  return sc.code;
}

/** Wait (through the tool's own long-poll) until the task reaches one of `statuses`. */
export async function waitFor(s: Session, taskId: string, statuses: string[], waitSeconds = 10): Promise<Record<string, unknown>> {
  const seen: string[] = [];
  for (let i = 0; i < 200 / waitSeconds; i++) {
    const v = ok(await s.call("get_agent_task", { task_id: taskId, wait_seconds: waitSeconds }));
    if (statuses.includes(String(v.status))) return v;
    seen.push(String(v.status));
  }
  throw new Error(`task ${taskId} never reached ${statuses.join("/")} (saw ${seen.join(", ")})`);
}
