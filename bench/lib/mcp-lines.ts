// A minimal MCP client for benches that time serverfs itself: newline-delimited JSON-RPC over a
// compiled `serverfs serve`'s pipes, protocol 2025-06-18, no capabilities. Replies are matched by
// id; notifications are dropped; a request from the server (serve asks none of a client that
// declares no capabilities) is answered "method not found". The MCP SDK's client spent about 4 ms
// more per call on this machine (list_workdirs: 3.4-5.3 ms through it, 0.34 ms with this), which
// is the client library's time, not serve's.
interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

export interface LineMcp {
  pid: number;
  /** tools/call; resolves with the result object (structuredContent, content, isError). */
  call(name: string, args: Record<string, unknown>): Promise<{ isError?: boolean; structuredContent?: Record<string, unknown>; content?: unknown }>;
  /** One bare round trip (ping), for the floor of a call. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export async function openLineMcp(bin: string, toml: string, cwd: string): Promise<LineMcp> {
  const proc = Bun.spawn([bin, "serve", "--config", toml], {
    cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
  });
  const pending = new Map<number, Pending>();
  let nextId = 1;
  const send = (message: unknown) => {
    proc.stdin.write(`${JSON.stringify(message)}\n`);
    void proc.stdin.flush();
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of proc.stdout) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === "") continue;
        const msg = JSON.parse(line) as { id?: number; method?: string; result?: Record<string, unknown>; error?: { message: string } };
        if (msg.method !== undefined) {
          if (msg.id !== undefined) send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "not supported by this client" } });
          continue;
        }
        const waiter = msg.id === undefined ? undefined : pending.get(msg.id);
        if (!waiter) continue;
        pending.delete(msg.id!);
        if (msg.error) waiter.reject(new Error(msg.error.message));
        else waiter.resolve(msg.result ?? {});
      }
    }
    for (const w of pending.values()) w.reject(new Error("serve closed its output"));
  })();
  const request = (method: string, params: unknown) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      send({ jsonrpc: "2.0", id, method, params });
    });
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await request("tools/list", {});
  return {
    pid: proc.pid,
    call: (name, args) => request("tools/call", { name, arguments: args }),
    ping: async () => {
      await request("ping", {});
    },
    async close() {
      proc.stdin.end();
      await proc.exited;
    },
  };
}

