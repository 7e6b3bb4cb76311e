// The real CLI chain one interop cell runs through: the MCP SDK client speaks stdio to a
// `serverfs serve` process, whose agent tools reach a `serverfs bridge` process over its socket,
// which drives the agent. Both serverfs processes are the compiled binary, started from a
// serverfs.toml that holds the agent's runtime settings the way an operator writes them.
import { Client, type CallToolResult } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import fs from "node:fs";
import path from "node:path";
import { bridgeClientFor } from "../src/bridge/ipc/connect.ts";
import { bridgeEnv } from "./host.ts";

export type Task = Record<string, unknown> & { task_id: string; status: string };
export type Pending = { request_id: string; kind?: string; payload: { response_options?: Array<{ option_id: string; kind: string; name?: string }> } };
export const TERMINAL = new Set(["succeeded", "failed", "cancelled", "interrupted"]);

export class Chain {
  private bridge: ReturnType<typeof Bun.spawn> | null = null;
  private client: Client | null = null;
  readonly bridgeLog: string;

  constructor(
    readonly bin: string,
    readonly base: string,
    readonly config: string,
    readonly runtime: string,
    readonly home: string,
  ) {
    this.bridgeLog = path.join(base, "bridge.log");
  }

  async startBridge(): Promise<void> {
    const log = fs.openSync(this.bridgeLog, "a");
    // A service manager's environment, not this shell's: what the host exports (e.g. IS_SANDBOX,
    // CA bundles) would otherwise reach every agent and make the matrix depend on the machine.
    const env = bridgeEnv(this.home);
    this.bridge = Bun.spawn([this.bin, "bridge", "--config", this.config], { stdin: "ignore", stdout: log, stderr: log, env, windowsHide: true });
    fs.closeSync(log);
    // Under Wine a Windows process takes seconds to start.
    const until = Date.now() + (process.platform === "win32" ? 90_000 : 20_000);
    while (Date.now() < until && this.bridge.exitCode === null) {
      try {
        // Made anew each try: on Windows the client reads the pipe token the Bridge writes at start.
        await bridgeClientFor({ server: { state_dir: path.join(this.base, "state") } }, { timeoutMs: 2000 }).call("bridge.status", {});
        return;
      } catch {
        await Bun.sleep(50);
      }
    }
    throw new Error(`bridge did not start (see ${this.bridgeLog})`);
  }

  /** The running Bridge's pid (the Windows scan's root), or null between a stop and a start. */
  bridgePid(): number | null {
    return this.bridge?.pid ?? null;
  }

  async stopBridge(): Promise<void> {
    if (!this.bridge) return;
    this.bridge.kill("SIGTERM");
    const code = await Promise.race([this.bridge.exited, Bun.sleep(30_000).then(() => null)]);
    if (code === null) this.bridge.kill("SIGKILL");
    this.bridge = null;
  }

  async connect(): Promise<void> {
    const transport = new StdioClientTransport({ command: this.bin, args: ["serve", "--config", this.config], stderr: "ignore" });
    this.client = new Client({ name: "serverfs-interop", version: "1" });
    await this.client.connect(transport);
  }

  async close(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = null;
    await this.stopBridge();
  }

  async raw(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await this.client!.callTool({ name, arguments: args }, { timeout: 120_000 })) as CallToolResult;
  }

  async tool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const r = await this.raw(name, args);
    if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content)}`);
    return r.structuredContent as Record<string, unknown>;
  }

  /** Submit; while a previous task's writer lease is still being released, try again (bounded). */
  async submit(prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
    const until = Date.now() + 30_000;
    for (;;) {
      const r = await this.raw("submit_agent_task", { runtime: this.runtime, workdir: "app", prompt, ...extra });
      const code = (r.structuredContent as { code?: string } | undefined)?.code;
      if (!r.isError) return (r.structuredContent as { task_id: string }).task_id;
      if (code !== "WORKDIR_BUSY" || Date.now() > until) throw new Error(`submit_agent_task: ${JSON.stringify(r.structuredContent ?? r.content)}`);
      await Bun.sleep(250);
    }
  }

  /** get_agent_task's own long-poll: returns on any change, so this loop does not spin. */
  async waitFor(id: string, pred: (t: Task) => boolean, timeoutMs: number): Promise<Task> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const t = (await this.tool("get_agent_task", { task_id: id, wait_seconds: 5 })) as Task;
      if (pred(t)) return t;
      if (Date.now() > until) throw new Error(`timed out: task is ${t.status}`);
    }
  }

  terminal(id: string, timeoutMs = 180_000): Promise<Task> {
    return this.waitFor(id, (t) => TERMINAL.has(t.status), timeoutMs);
  }
}

/** The option of `kind` the agent offered (the first when it offers several of one kind). */
export function optionOfKind(req: Pending, kind: string): string | null {
  return req.payload.response_options?.find((o) => o.kind === kind)?.option_id ?? null;
}
