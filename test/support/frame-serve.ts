// A real `serverfs serve` (from source, or the executable SERVERFS_TEST_SERVE_BIN names: .ci/run's
// compiled-binary lane) spoken to in raw JSON-RPC frames, for the hostile-input tests: frames are
// written exactly as given (a big one in 1 MiB pieces, as a host writes it), replies are kept in
// arrival order so a test can show which answer came first, and /proc gives its memory figures.
// The 120 MB promise is the executable's, not `bun src/cli.ts`'s: memory is asserted only when
// BIN is set (the compiled lane); the default suite runs the same tests without those figures.
import { expect } from "bun:test";
import fs from "node:fs";
import path from "node:path";
import { BUN, CLI } from "./proc.ts";

export const BIN = process.env.SERVERFS_TEST_SERVE_BIN;
const MB = 1024 * 1024;
/** Peak RSS (VmHWM) serve may reach whatever the request. */
export const LIMIT_MB = 120;
/** How far above idle RSS may stay 2 s after the last answer. */
export const SETTLED_MB = 20;

export interface FrameReply {
  id?: unknown;
  result?: { structuredContent?: Record<string, unknown> & { matches?: unknown[] }; content?: { type: string; text?: string; data?: string; mimeType?: string }[]; isError?: boolean };
  error?: { code: number; message: string };
}

export class FrameServe {
  readonly proc: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
  readonly replies: FrameReply[] = [];
  private wake: Array<() => void> = [];

  constructor(config: string, cwd: string) {
    const cmd = BIN ? [path.resolve(BIN)] : [BUN, CLI];
    this.proc = Bun.spawn([...cmd, "serve", "--config", config], { cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd } });
    void this.pump();
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of this.proc.stdout) {
      partial += decoder.decode(chunk, { stream: true });
      const lines = partial.split("\n");
      partial = lines.pop()!;
      for (const l of lines) if (l !== "") this.replies.push(JSON.parse(l) as FrameReply);
      for (const w of this.wake.splice(0)) w();
    }
    for (const w of this.wake.splice(0)) w();
  }

  /** Write `bytes` in 1 MiB pieces, waiting for each to be taken. */
  async write(bytes: Buffer): Promise<void> {
    for (let i = 0; i < bytes.length; i += MB) {
      this.proc.stdin.write(bytes.subarray(i, i + MB));
      await this.proc.stdin.flush();
    }
  }

  /** Several frames in ONE write, so they reach serve together. */
  send(...frames: object[]): Promise<void> {
    return this.write(Buffer.from(frames.map((f) => `${JSON.stringify(f)}\n`).join("")));
  }

  async reply(id: unknown): Promise<FrameReply> {
    for (;;) {
      const found = this.replies.find((r) => r.id === id);
      if (found) return found;
      if (this.proc.exitCode !== null) throw new Error(`serve exited before answering ${String(id)}`);
      await new Promise<void>((resolve) => this.wake.push(resolve));
    }
  }

  /** Where the answer to `id` is in arrival order (-1: not yet). */
  position(id: unknown): number {
    return this.replies.findIndex((r) => r.id === id);
  }

  status(field: "VmHWM" | "VmRSS"): number {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${this.proc.pid}/status`, "utf8"));
    return Number(m![1]) / 1024;
  }

  async close(): Promise<string> {
    this.proc.stdin.end();
    expect(await this.proc.exited).toBe(0);
    return new Response(this.proc.stderr).text();
  }
}

/** In the compiled lane: peak RSS within LIMIT_MB, and RSS back within SETTLED_MB of `idle` 2 s after the last answer. */
export async function expectServeMemory(s: FrameServe, idle: number): Promise<void> {
  if (!BIN) return;
  expect(s.status("VmHWM")).toBeLessThanOrEqual(LIMIT_MB);
  // measured 2 s after the last answer, as the promise is stated (a measurement point, not a wait for an event)
  await Bun.sleep(2000);
  expect(s.status("VmRSS")).toBeLessThanOrEqual(idle + SETTLED_MB);
}
