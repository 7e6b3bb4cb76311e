// A provider protocol of one JSON object per line each way over the child's stdin/stdout (the Codex
// app-server, qodercli's stream-json). Anything on stdout that is not one JSON object per line
// ends the connection as a protocol failure: a provider that corrupts its control channel cannot
// be trusted to report approvals faithfully. What the objects mean is the subclass's business.
import type { ContainedProcess } from "../../../platform/types.ts";
import { ServerfsError } from "../../errors.ts";
import { closeChildInput } from "./child-input.ts";

export interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export abstract class JsonLineConnection {
  /** Our requests still waiting on an answer, by our id; the connection's end rejects them all. */
  protected readonly pending = new Map<number | string, Pending>();
  private ended: ServerfsError | null = null;
  private failWith!: (e: ServerfsError) => void;
  /** Rejects once, when the connection is lost or corrupted. Never resolves. */
  readonly failure: Promise<never>;

  constructor(
    protected readonly proc: ContainedProcess,
    /** The provider as messages name it ("codex", "qodercli"). */
    private readonly provider: string,
    private readonly maxLineBytes: number,
  ) {
    this.failure = new Promise<never>((_, reject) => {
      this.failWith = reject;
    });
    this.failure.catch(() => {});
    // Nothing is dispatched before the first chunk has been awaited, so a subclass's own fields
    // are initialized by then.
    void this.readLoop();
  }

  /** One JSON object the provider sent, in arrival order. */
  protected abstract dispatch(message: Record<string, unknown>): void;

  get closed(): boolean {
    return this.ended !== null;
  }

  /** What the connection ended with, or null while it is open. */
  protected get dead(): ServerfsError | null {
    return this.ended;
  }

  /** End the connection with `err` (idempotent); every outstanding request rejects with it. */
  fail(err: ServerfsError): void {
    if (this.ended !== null) return;
    this.ended = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.failWith(err);
  }

  endInput(): void {
    closeChildInput(this.proc);
  }

  protected write(message: unknown): void {
    if (this.ended !== null) return;
    try {
      this.proc.stdin.write(`${JSON.stringify(message)}\n`);
      const r = this.proc.stdin.flush();
      if (r instanceof Promise) r.catch(() => this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `${this.provider} closed its input`)));
    } catch {
      this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `${this.provider} closed its input`));
    }
  }

  private async readLoop(): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of this.proc.stdout) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line.length > 0) this.parse(line);
          if (this.ended !== null) return;
        }
        if (buf.length > this.maxLineBytes) {
          this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", `${this.provider} sent a message larger than ${this.maxLineBytes / (1024 * 1024)} MiB`));
          return;
        }
      }
    } catch {
      // stream error: same as end of output
    }
    this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `${this.provider} exited or closed its output`));
  }

  private parse(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", `${this.provider} wrote something that is not JSON on its protocol channel`));
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", `${this.provider} wrote a non-object message`));
      return;
    }
    this.dispatch(msg as Record<string, unknown>);
  }
}
