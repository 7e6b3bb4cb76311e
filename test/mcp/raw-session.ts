// One `serverfs serve` process spoken to in raw JSON-RPC frames over stdio (the wire tests of
// both protocol eras); replies are collected by id.
import { expect } from "bun:test";
import { BUN, CLI } from "../support/proc.ts";


export type Frame = Record<string, unknown>;
export interface Reply {
  jsonrpc: string;
  id?: string | number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** One serve process spoken to in raw frames; replies are collected by id. */
export class RawSession {
  readonly proc: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
  private readonly lines: string[] = [];
  private readonly waiters: Array<() => void> = [];
  private nextId = 1;

  constructor(workdir: string, cwd: string) {
    this.proc = Bun.spawn([BUN, CLI, "serve", "--workdir", `wd=${workdir}:rw`], {
      cwd,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd },
    });
    void this.pump();
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of this.proc.stdout) {
      partial += decoder.decode(chunk, { stream: true });
      const parts = partial.split("\n");
      partial = parts.pop()!;
      this.lines.push(...parts);
      for (const w of this.waiters.splice(0)) w();
    }
  }

  write(text: string): void {
    this.proc.stdin.write(text);
    this.proc.stdin.flush();
  }

  send(frame: Frame): void {
    this.write(`${JSON.stringify(frame)}\n`);
  }

  /** Every line on stdout so far, parsed. */
  all(): Reply[] {
    return this.lines.map((l) => JSON.parse(l) as Reply);
  }

  async reply(id: string | number, timeoutMs = 10_000): Promise<Reply> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = this.all().find((r) => r.id === id);
      if (found) return found;
      if (Date.now() > until) throw new Error(`no reply for id ${id}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  /** Send `frame` under a fresh id (unless it brings its own) and return its reply. */
  async request(frame: Frame): Promise<Reply> {
    const id = "id" in frame ? (frame.id as number) : this.nextId++;
    this.send({ jsonrpc: "2.0", id, ...frame });
    return this.reply(id);
  }

  async ping(): Promise<void> {
    const id = `ping-${this.nextId++}`;
    this.send({ jsonrpc: "2.0", id, method: "ping" });
    const r = await this.reply(id);
    expect(r.result).toEqual({});
  }

  async close(): Promise<string> {
    this.proc.stdin.end();
    expect(await this.proc.exited).toBe(0);
    return new Response(this.proc.stderr).text();
  }
}

