// A raw client on a JSON-lines unix socket (the Bridge's wire): it collects reply lines, notices
// when the server closes it, and can misbehave (partial frames, garbage, floods).
import net from "node:net";

export interface LineSocketDefaults {
  /** How long next() waits for a reply line. */
  replyMs: number;
  /** How long waitClosed() waits for the server to close. */
  closeMs: number;
}

export class LineSocket {
  private buf = "";
  readonly lines: string[] = [];
  closed = false;
  private waiters: (() => void)[] = [];

  constructor(
    readonly sock: net.Socket,
    private readonly defaults: LineSocketDefaults = { replyMs: 10_000, closeMs: 15_000 },
  ) {
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf("\n")) !== -1) {
        this.lines.push(this.buf.slice(0, nl));
        this.buf = this.buf.slice(nl + 1);
      }
      this.wake();
    });
    sock.on("close", () => {
      this.closed = true;
      this.wake();
    });
    sock.on("error", () => {});
  }

  static open(p: string, defaults?: LineSocketDefaults): Promise<LineSocket> {
    return new Promise((resolve, reject) => {
      const s = net.connect({ path: p });
      s.once("connect", () => resolve(new LineSocket(s, defaults)));
      s.once("error", reject);
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private settle(): Promise<void> {
    return new Promise<void>((r) => {
      this.waiters.push(r);
      setTimeout(r, 100);
    });
  }

  /** Write and resolve once the bytes are handed to the kernel. */
  send(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve) => this.sock.write(data, () => resolve()));
  }

  async next(timeoutMs = this.defaults.replyMs): Promise<Record<string, unknown>> {
    const until = Date.now() + timeoutMs;
    while (this.lines.length === 0) {
      if (this.closed) throw new Error("closed without reply");
      if (Date.now() > until) throw new Error("no reply");
      await this.settle();
    }
    return JSON.parse(this.lines.shift()!) as Record<string, unknown>;
  }

  async waitClosed(timeoutMs = this.defaults.closeMs): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < until) await this.settle();
    return this.closed;
  }

  end(): void {
    this.sock.destroy();
  }
}

/** One request frame of the Bridge protocol. */
export const frame = (id: string, method = "bridge.status", params: unknown = {}) =>
  `${JSON.stringify({ protocol_version: 1, request_id: id, method, params })}\n`;

/** The coded error of a reply frame. */
export function errorCode(reply: Record<string, unknown>): string {
  return (reply.error as { code: string }).code;
}
