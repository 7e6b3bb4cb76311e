// A compiled `serverfs serve` driven as a host drives it (SDK client, MCP over stdio), for the
// memory benches: one fresh process per scenario, because VmHWM only ever grows.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";

export interface ServeSession {
  client: Client;
  pid: number;
  call: (name: string, args: Record<string, unknown>) => Promise<CallToolResult>;
  close: () => Promise<void>;
}

/**
 * How long a settled first call waits after the full server answered a ping: what the load
 * queued for the engine's compiler threads is done by then, so the call pays only for itself.
 */
export const SETTLE_MS = 500;

/**
 * Wait until `s` is a settled fresh serve: its full server is loaded (it answered a ping, which
 * the opening hands over to it) and SETTLE_MS passed. A first call after this shows what the
 * call costs in a fresh process without the load it would otherwise wait for.
 */
export async function settle(s: ServeSession): Promise<void> {
  await s.client.ping();
  await Bun.sleep(SETTLE_MS);
}

/** Peak resident set of a live process, from /proc/<pid>/status, in KiB. */
export function vmHwmKiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error("no VmHWM in /proc status");
  return Number(m[1]);
}

/** `bin serve --config toml`, initialized and with its tools listed (the idle baseline's state). */
export async function openServe(bin: string, toml: string, cwd: string, clientName: string): Promise<ServeSession> {
  const transport = new StdioClientTransport({
    command: bin,
    args: ["serve", "--config", toml],
    cwd,
    stderr: "ignore",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
    // An 8 MiB download answers with a ~11 MiB frame; the SDK's client default is 10 MiB.
    maxBufferSize: 64 * 1024 * 1024,
  } as ConstructorParameters<typeof StdioClientTransport>[0]);
  const client = new Client({ name: clientName, version: "0" });
  await client.connect(transport);
  await client.listTools();
  const pid = transport.pid;
  if (pid === null || pid === undefined) throw new Error("serve has no pid");
  return {
    client,
    pid,
    call: async (name, args) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 300_000 })) as CallToolResult,
    close: () => client.close(),
  };
}

/** A serve config exposing `root` read-only as workdir `alias`, with the given [limits], in `dir`. */
export function writeServeConfig(dir: string, alias: string, root: string, limits: Record<string, number>): string {
  const toml = `${dir}/serverfs.toml`;
  const lim = Object.entries(limits)
    .map(([k, v]) => `${k} = ${v}\n`)
    .join("");
  fs.writeFileSync(toml, `[limits]\n${lim}\n[[workdirs]]\nalias = ${JSON.stringify(alias)}\npath = ${JSON.stringify(root)}\nread_only = true\n`);
  return toml;
}

/** CPU time of every thread of a live process so far (ns, from /proc/<pid>/task/<tid>/schedstat). */
export function cpuNs(pid: number): number {
  let ns = 0;
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return ns;
}

/**
 * User + system CPU time of a live process so far, every thread it ever had included (fields 14
 * and 15 of /proc/<pid>/stat), in ms; clock-tick resolution (10 ms), so for totals over many tasks.
 */
export function processCpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticksPerSecond = 100;
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
}

/** User + system CPU time of a finished Bun.spawnSync child, in ms. */
export function spawnCpuMs(r: { resourceUsage?: unknown }): number {
  return Number((r.resourceUsage as { cpuTime: { total: bigint } }).cpuTime.total) / 1000;
}
