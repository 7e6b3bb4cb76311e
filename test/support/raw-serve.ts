// A `serverfs serve` process driven with raw JSON-RPC frames over stdio, for tests that need to
// control frame timing exactly (a request sent while another is still running) rather than go
// through an SDK client. It is initialized on start; `ready` resolves with the initialize reply.
import path from "node:path";

const CLI = path.resolve(import.meta.dir, "../../src/cli.ts");

export interface RawReply {
  id: number;
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

export interface RawServe {
  /** Writes each message as one line. */
  send(...msgs: object[]): void;
  /** Reads stdout until a reply for every id has arrived. */
  until(ids: number[]): Promise<void>;
  /** Every reply so far, in arrival order. */
  replies: RawReply[];
  close(): Promise<number>;
  ready: Promise<void>;
}

/** Each started process is pushed to `spawned`, so the caller's afterAll can kill what a failed test left. */
export function rawServe(args: string[], cwd: string, spawned: { kill(signal?: number): void; exitCode: number | null }[]): RawServe {
  const proc = Bun.spawn([process.execPath, CLI, "serve", ...args], {
    cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
  });
  spawned.push(proc);
  const replies: RawReply[] = [];
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let partial = "";
  const send = (...msgs: object[]) => {
    proc.stdin.write(msgs.map((m) => `${JSON.stringify(m)}\n`).join(""));
    proc.stdin.flush();
  };
  const until = async (ids: number[]) => {
    while (!ids.every((id) => replies.some((r) => r.id === id))) {
      const { value, done } = await reader.read();
      if (done) throw new Error("stdout ended early");
      partial += decoder.decode(value, { stream: true });
      const lines = partial.split("\n");
      partial = lines.pop() as string;
      for (const line of lines) if (line !== "") replies.push(JSON.parse(line) as RawReply);
    }
  };
  send(
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
  );
  const close = async () => {
    proc.stdin.end();
    return proc.exited;
  };
  return { send, until, replies, close, ready: until([1]) };
}
