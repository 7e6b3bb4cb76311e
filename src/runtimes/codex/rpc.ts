// The Codex app-server wire: newline-delimited JSON-RPC over the child's stdin/stdout WITHOUT the
// "jsonrpc" field (native-findings §1). Client requests carry our ids; server requests carry the
// server's own ids (its counter starts at 0), so the two id spaces never mix. Anything on stdout
// that is not one JSON object per line ends the connection as a protocol failure: a provider
// that corrupts its control channel cannot be trusted to report approvals faithfully.
import type { ContainedProcess } from "../../../platform/types.ts";
import { ServerfsError } from "../../errors.ts";

/** One message line may carry a whole rollout (thread/resume); beyond this it is not Codex. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

export type ServerRequestHandler = (method: string, params: Record<string, unknown>, id: number | string) => Promise<unknown>;
export type NotificationHandler = (method: string, params: Record<string, unknown>) => void;

/** A JSON-RPC error answer from Codex (the message is provider text: private diagnostics only). */
export class CodexRpcError extends Error {
  constructor(
    readonly rpcCode: number | null,
    readonly providerMessage: string,
  ) {
    super("codex answered with an error");
  }
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export class CodexRpc {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: ServerfsError | null = null;
  private failWith!: (e: ServerfsError) => void;
  /** Rejects once, when the connection is lost or corrupted. Never resolves. */
  readonly failure: Promise<never>;

  constructor(
    private readonly proc: ContainedProcess,
    private readonly handlers: { onNotification: NotificationHandler; onServerRequest: ServerRequestHandler; onActivity?: () => void },
  ) {
    this.failure = new Promise<never>((_, reject) => {
      this.failWith = reject;
    });
    this.failure.catch(() => {});
    void this.readLoop();
  }

  get closed(): boolean {
    return this.dead !== null;
  }

  /** End the connection with `err` (idempotent); every outstanding request rejects with it. */
  fail(err: ServerfsError): void {
    if (this.dead !== null) return;
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.failWith(err);
  }

  request<T = Record<string, unknown>>(method: string, params: unknown, timeoutMs?: number): Promise<T> {
    if (this.dead !== null) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | null = null;
      const done = () => {
        if (timer !== null) clearTimeout(timer);
        this.pending.delete(id);
      };
      this.pending.set(id, {
        resolve: (v) => {
          done();
          resolve(v as T);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `codex did not answer ${method} within ${Math.round(timeoutMs / 1000)} s`));
        }, timeoutMs);
      }
      this.write({ id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    this.write(params === undefined ? { method } : { method, params });
  }

  private write(message: unknown): void {
    if (this.dead !== null) return;
    try {
      this.proc.stdin.write(`${JSON.stringify(message)}\n`);
      const r = this.proc.stdin.flush();
      if (r instanceof Promise) r.catch(() => this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "codex closed its input")));
    } catch {
      this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "codex closed its input"));
    }
  }

  private respond(id: number | string, body: { result: unknown } | { error: { code: number; message: string } }): void {
    this.write({ id, ...body });
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
          if (line.length > 0) this.dispatch(line);
          if (this.dead !== null) return;
        }
        if (buf.length > MAX_LINE_BYTES) {
          this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", "codex sent a message larger than 64 MiB"));
          return;
        }
      }
    } catch {
      // stream error: same as end of output
    }
    this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "codex exited or closed its output"));
  }

  private dispatch(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", "codex wrote something that is not JSON on its protocol channel"));
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", "codex wrote a non-object message"));
      return;
    }
    this.handlers.onActivity?.();
    const m = msg as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    const params = m.params !== null && typeof m.params === "object" && !Array.isArray(m.params) ? (m.params as Record<string, unknown>) : {};
    if (typeof m.method === "string" && (typeof m.id === "number" || typeof m.id === "string")) {
      const id = m.id;
      this.handlers.onServerRequest(m.method, params, id).then(
        (result) => this.respond(id, { result }),
        (err) => {
          const message = err instanceof ServerfsError ? err.code : "request refused";
          this.respond(id, { error: { code: -32000, message } });
        },
      );
      return;
    }
    if (typeof m.method === "string") {
      this.handlers.onNotification(m.method, params);
      return;
    }
    if (typeof m.id === "number") {
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.error !== undefined && m.error !== null) {
        const e = m.error as { code?: unknown; message?: unknown };
        p.reject(new CodexRpcError(typeof e.code === "number" ? e.code : null, typeof e.message === "string" ? e.message.slice(0, 4096) : ""));
      } else {
        p.resolve(m.result ?? {});
      }
    }
  }
}
