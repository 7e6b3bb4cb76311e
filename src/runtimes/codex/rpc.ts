// The Codex app-server wire: newline-delimited JSON-RPC over the child's stdin/stdout WITHOUT the
// "jsonrpc" field (docs/runtimes.md, Codex). Client requests carry our ids; server requests carry the
// server's own ids (its counter starts at 0), so the two id spaces never mix.
import type { ContainedProcess } from "../../../platform/types.ts";
import { ServerfsError } from "../../errors.ts";
import { JsonLineConnection } from "../kernel/json-lines.ts";

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

export class CodexRpc extends JsonLineConnection {
  private nextId = 1;

  constructor(
    proc: ContainedProcess,
    private readonly handlers: { onNotification: NotificationHandler; onServerRequest: ServerRequestHandler; onActivity?: () => void },
  ) {
    super(proc, "codex", MAX_LINE_BYTES);
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

  private respond(id: number | string, body: { result: unknown } | { error: { code: number; message: string } }): void {
    this.write({ id, ...body });
  }

  protected override dispatch(msg: Record<string, unknown>): void {
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
