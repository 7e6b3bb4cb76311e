// The MCP-host smoke test: what a desktop assistant host (Claude Desktop style) does with a
// serverfs executable, end to end. It writes a real serverfs.toml (one read-only and one read-write
// workdir, real files), starts `<exe> serve --config <file>` on stdio, connects the SDK clients
// hosts ship (SDK v1, and SDK v2 negotiating `auto`), and uses the surface a host uses; one raw
// exchange proves stdout carries only JSON-RPC frames and that closing stdin ends the server.
// The same file runs on Linux (`npm test`) and on Windows (the Wine lane, scripts/windows-lane):
// on Windows it drives dist/serverfs-windows-x64.exe (run.sh builds it); elsewhere `bun src/cli.ts`,
// or the executable SERVERFS_TEST_SERVE_BIN names (.ci/run's compiled-binary lane).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Readable } from "node:stream";
import pkg from "../../package.json" with { type: "json" };
import { removeTree } from "../platform/windows-helpers.ts";
import { treeSnapshot as snapshot } from "../support/tree.ts";
import { FILE_MUTATION_TOOLS, FILE_READ_TOOLS } from "../support/tool-names.ts";

const onWindows = process.platform === "win32";
const ROOT = path.resolve(import.meta.dir, "../..");

/** The serve command line a host would be configured with. */
function serverCommand(config: string): { command: string; args: string[] } {
  const serve = ["serve", "--config", config];
  const override = process.env.SERVERFS_TEST_SERVE_BIN;
  if (override) return { command: path.resolve(override), args: serve };
  if (onWindows) {
    const exe = path.join(ROOT, "dist", "serverfs-windows-x64.exe");
    if (!fs.existsSync(exe)) throw new Error(`${exe} is missing: build it with ./node_modules/.bin/bun build/compile.ts windows-x64 (scripts/windows-lane/run.sh does)`);
    return { command: exe, args: serve };
  }
  // Never a dist/ binary picked up by accident: it may be older than the checkout. .ci/run runs
  // this file again with SERVERFS_TEST_SERVE_BIN pointing at the executable it just built.
  return { command: process.execPath, args: [path.join(ROOT, "src", "cli.ts"), ...serve] };
}

const READ_TOOLS: readonly string[] = FILE_READ_TOOLS;
const WRITE_TOOLS: readonly string[] = FILE_MUTATION_TOOLS;
const NOTES = "alpha\nneedle here\nomega\n";

let base = "";
let config = "";
let env: Record<string, string> = {};


/** The temp root in every spelling a log line could carry it (raw, JSON-escaped, forward slashes). */
function rootSpellings(): string[] {
  return [...new Set([base, JSON.stringify(base).slice(1, -1), base.replaceAll("\\", "/")])];
}

/** serve's stderr must be JSON log lines only, none naming where the test's files live. */
function expectCleanStderr(text: string): void {
  for (const line of text.split("\n").filter((l) => l.trim() !== "")) {
    expect(() => JSON.parse(line), line).not.toThrow();
    expect(typeof (JSON.parse(line) as Record<string, unknown>)).toBe("object");
  }
  for (const spelling of rootSpellings()) expect(text).not.toContain(spelling);
}

beforeAll(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "sfs-host-")));
  const ro = path.join(base, "ro");
  const rw = path.join(base, "rw");
  fs.mkdirSync(path.join(ro, "sub"), { recursive: true });
  fs.mkdirSync(rw);
  fs.writeFileSync(path.join(ro, "notes.md"), NOTES);
  fs.writeFileSync(path.join(ro, "sub", "deep.txt"), "a deeper needle\n");
  fs.writeFileSync(path.join(base, "x"), "outside\n");
  config = path.join(base, "serverfs.toml");
  fs.writeFileSync(
    config,
    [
      "[[workdirs]]",
      'alias = "ro"',
      `path = ${JSON.stringify(ro)}`,
      'description = "read-only docs"',
      "",
      "[[workdirs]]",
      'alias = "rw"',
      `path = ${JSON.stringify(rw)}`,
      "read_only = false",
      "",
    ].join("\n"),
  );
  // What a host hands a server it launches: a small environment, its own profile dir.
  env = onWindows
    ? { PATH: process.env.PATH ?? "", SYSTEMROOT: process.env.SYSTEMROOT ?? "C:\\Windows", USERPROFILE: base, TEMP: base }
    : { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: base };
});

afterAll(() => {
  if (base !== "") removeTree(base);
});

interface Host {
  server: { name?: string; version?: string } | undefined;
  protocol: string | undefined;
  tools(): Promise<Array<Record<string, unknown>>>;
  templates(): Promise<Array<Record<string, unknown>>>;
  call(name: string, args?: Record<string, unknown>): Promise<Result>;
  read(uri: string): Promise<Array<Record<string, unknown>>>;
  /** Transport errors the client saw (a non-JSON stdout line is one). */
  errors: string[];
  stderr(): string;
  close(): Promise<void>;
}
interface Result {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function collect(stream: Readable | null): () => string {
  const chunks: string[] = [];
  stream?.on("data", (c: Buffer) => chunks.push(c.toString("utf8")));
  return () => chunks.join("");
}

async function connectV1(): Promise<Host> {
  const transport = new StdioV1({ ...serverCommand(config), env, cwd: base, stderr: "pipe" });
  const stderr = collect(transport.stderr as Readable | null);
  // StdioClientTransport keeps no protocol version; the client hands the negotiated one to a
  // transport that takes it, which is how the test sees what initialize agreed on.
  let protocol: string | undefined;
  (transport as unknown as { setProtocolVersion: (v: string) => void }).setProtocolVersion = (v) => (protocol = v);
  const client = new ClientV1({ name: "host-smoke-v1", version: "1.0.0" });
  const errors: string[] = [];
  client.onerror = (e) => errors.push(String(e));
  await client.connect(transport);
  return {
    server: client.getServerVersion(),
    protocol,
    tools: async () => (await client.listTools()).tools as Array<Record<string, unknown>>,
    templates: async () => (await client.listResourceTemplates()).resourceTemplates as Array<Record<string, unknown>>,
    call: async (name, a = {}) => (await client.callTool({ name, arguments: a })) as Result,
    read: async (uri) => (await client.readResource({ uri })).contents as Array<Record<string, unknown>>,
    errors,
    stderr,
    close: () => client.close(),
  };
}

async function connectV2(): Promise<Host> {
  const transport = new StdioV2({ ...serverCommand(config), env, cwd: base, stderr: "pipe" });
  const stderr = collect(transport.stderr as Readable | null);
  const client = new ClientV2({ name: "host-smoke-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  const errors: string[] = [];
  client.onerror = (e) => errors.push(String(e));
  await client.connect(transport);
  return {
    server: client.getServerVersion(),
    protocol: client.getNegotiatedProtocolVersion(),
    tools: async () => (await client.listTools()).tools as unknown as Array<Record<string, unknown>>,
    templates: async () => (await client.listResourceTemplates()).resourceTemplates as unknown as Array<Record<string, unknown>>,
    call: async (name, a = {}) => (await client.callTool({ name, arguments: a })) as unknown as Result,
    read: async (uri) => (await client.readResource({ uri })).contents as unknown as Array<Record<string, unknown>>,
    errors,
    stderr,
    close: () => client.close(),
  };
}

/** structuredContent of a success, after checking the text mirror equals it. */
function ok<T = Record<string, unknown>>(r: Result): T {
  if (r.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
  const last = r.content[r.content.length - 1];
  expect(last?.type).toBe("text");
  expect(JSON.parse(last!.text!)).toEqual(r.structuredContent!);
  return r.structuredContent as T;
}

/** The code of an error result, after checking its text is `CODE: message`. */
function code(r: Result): string {
  if (!r.isError) throw new Error(`expected an error, got ${JSON.stringify(r.structuredContent)}`);
  const sc = r.structuredContent as { code: string; message: string };
  expect(r.content[0]?.text).toBe(`${sc.code}: ${sc.message}`);
  return sc.code;
}

const CLIENTS: Array<[string, () => Promise<Host>, string]> = [
  ["SDK v1 client", connectV1, LATEST_PROTOCOL_VERSION],
  ["SDK v2 client (auto)", connectV2, "2026-07-28"],
];

describe.each(CLIENTS)("a host on the %s", (_label, connect, protocol) => {
  let host: Host;
  beforeAll(async () => {
    host = await connect();
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    for (const name of fs.readdirSync(path.join(base, "rw"))) removeTree(path.join(base, "rw", name));
  });

  test("initialize names serverfs at the package version and agrees on a protocol", () => {
    expect(host.server).toMatchObject({ name: "serverfs", version: pkg.version });
    expect(host.protocol).toBe(protocol);
  });

  test("tools/list is exactly this config's tools, each annotated and with an output schema", async () => {
    const tools = await host.tools();
    expect(tools.map((t) => t.name).sort()).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
    for (const t of tools) {
      expect([t.name, typeof t.description]).toEqual([t.name, "string"]);
      expect([t.name, typeof t.annotations]).toEqual([t.name, "object"]);
      expect([t.name, (t.outputSchema as { type?: string } | undefined)?.type]).toEqual([t.name, "object"]);
      const readOnly = (t.annotations as { readOnlyHint?: boolean }).readOnlyHint;
      expect([t.name, readOnly]).toEqual([t.name, READ_TOOLS.includes(String(t.name))]);
    }
    const templates = await host.templates();
    expect(templates.map((t) => t.uriTemplate)).toEqual(["serverfs://{workdir}/{path}"]);
  });

  test("the read tools and the resource template answer from the files on disk", async () => {
    const listed = ok<{ workdirs: Array<{ alias: string; access: string; description: string | null }> }>(await host.call("list_workdirs"));
    expect(listed.workdirs.map((w) => [w.alias, w.access, w.description])).toEqual([
      ["ro", "read-only", "read-only docs"],
      ["rw", "read-write", null],
    ]);
    const read = ok<{ content: string; revision: string }>(await host.call("read_text_file", { workdir: "ro", path: "notes.md" }));
    expect(read.content).toBe(NOTES);
    const hits = ok<{ matches: Array<{ path: string; line: number }> }>(await host.call("search_text", { workdir: "ro", query: "needle" }));
    expect(hits.matches.map((m) => `${m.path}:${m.line}`).sort()).toEqual(["notes.md:2", "sub/deep.txt:1"]);
    const stat = ok<{ type: string; size: number; revision: string }>(await host.call("stat_file", { workdir: "ro", path: "notes.md" }));
    expect(stat).toMatchObject({ type: "file", size: Buffer.byteLength(NOTES), revision: read.revision });
    const contents = await host.read("serverfs://ro/notes.md");
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: "serverfs://ro/notes.md", mimeType: "text/plain", text: NOTES });
  });

  test("create and edit in the rw workdir put exactly those bytes on disk", async () => {
    const file = path.join(base, "rw", "plan.md");
    const created = ok<{ revision: string; bytes_written: number }>(await host.call("create_text_file", { workdir: "rw", path: "plan.md", content: "step one\nstep two\n" }));
    expect(created.bytes_written).toBe(18);
    expect(fs.readFileSync(file, "utf8")).toBe("step one\nstep two\n");
    const edited = ok<{ revision: string; revision_before: string }>(
      await host.call("edit_text_file", { workdir: "rw", path: "plan.md", expected_revision: created.revision, edits: [{ old_text: "two", new_text: "2" }] }),
    );
    expect(edited.revision_before).toBe(created.revision);
    expect(edited.revision).not.toBe(created.revision);
    expect(fs.readFileSync(file, "utf8")).toBe("step one\nstep 2\n");
  });

  test("a write in the read-only workdir and a path out of the workdir are refused, nothing on disk", async () => {
    const before = snapshot(base);
    expect(code(await host.call("create_text_file", { workdir: "ro", path: "new.md", content: "x" }))).toBe("WORKDIR_READ_ONLY");
    const { revision } = ok<{ revision: string }>(await host.call("stat_file", { workdir: "ro", path: "notes.md" }));
    const edit = { workdir: "ro", path: "notes.md", expected_revision: revision, edits: [{ old_text: "alpha", new_text: "beta" }] };
    expect(code(await host.call("edit_text_file", edit))).toBe("WORKDIR_READ_ONLY");
    expect(code(await host.call("read_text_file", { workdir: "ro", path: "../x" }))).toBe("PATH_OUTSIDE_WORKDIR");
    expect(code(await host.call("create_text_file", { workdir: "rw", path: "../x", content: "clobber" }))).toBe("PATH_OUTSIDE_WORKDIR");
    expect(snapshot(base)).toEqual(before);
    expect(fs.readFileSync(path.join(base, "x"), "utf8")).toBe("outside\n");
  });

  // The v1 client reports a non-JSON stdout line as a transport error; v2 drops it silently, so the
  // raw exchange below is what proves stdout purity for every client.
  test("the client saw no transport error, and stderr held only JSON lines without the host's paths", () => {
    expect(host.errors).toEqual([]);
    expectCleanStderr(host.stderr());
  });
});

describe("the raw stdio exchange a host sees", () => {
  test("every stdout line is a JSON-RPC frame, and closing stdin ends serve with exit 0", async () => {
    const { command, args } = serverCommand(config);
    const proc = Bun.spawn([command, ...args], { cwd: base, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const stdoutText = new Response(proc.stdout).text();
    const stderrText = new Response(proc.stderr).text();
    const frames = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw-host", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_workdirs", arguments: {} } },
    ];
    for (const f of frames) proc.stdin.write(`${JSON.stringify(f)}\n`);
    await proc.stdin.flush();
    // A host closes stdin to stop a stdio server; serve drains the requests it already has and
    // exits. The bound is a hang guard, not a speed check.
    proc.stdin.end();
    // serve answers what is in flight for up to 5 s after stdin EOF (docs/tools.md), so the guard is longer.
    const exited = await Promise.race([proc.exited, Bun.sleep(25_000).then(() => "still running" as const)]);
    if (exited === "still running") proc.kill();
    expect(exited).toBe(0);

    const lines = (await stdoutText).split("\n");
    expect(lines.pop()).toBe("");
    const replies = lines.map((l) => JSON.parse(l) as { jsonrpc: string; id?: number; result?: Record<string, unknown> });
    for (const r of replies) expect(r.jsonrpc).toBe("2.0");
    expect(replies.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(replies[0]!.result).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "serverfs", version: pkg.version } });
    expect((replies[1]!.result!.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual([...READ_TOOLS, ...WRITE_TOOLS].sort());
    expect(replies[2]!.result).toMatchObject({ structuredContent: { workdirs: [{ alias: "ro" }, { alias: "rw" }] } });
    expectCleanStderr(await stderrText);
  }, 30_000);
});
