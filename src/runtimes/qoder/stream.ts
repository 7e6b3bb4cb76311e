// The qodercli non-interactive streaming protocol (`--print --input-format stream-json
// --output-format stream-json --permission-prompt-tool stdio`): one JSON object per line each
// way, Claude-Code-shaped (native-findings §3). The CLI sends `system`/`assistant`/`result`
// messages plus `control_request {subtype:"can_use_tool"}` (answered with `control_response`)
// and `control_cancel_request`; we send `user` messages and our own control requests
// (`interrupt`, `set_proxy`). Anything on stdout that is not a JSON object ends the connection.
import type { ContainedProcess } from "../../../platform/types.ts";
import { ServerfsError } from "../../errors.ts";

const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface StreamHandlers {
  onMessage(message: Record<string, unknown>): void;
  /** A control request from the CLI; the result becomes the control_response body. */
  onControlRequest(requestId: string, request: Record<string, unknown>): Promise<Record<string, unknown>>;
  onControlCancel(requestId: string): void;
}

export class QoderStream {
  private readonly pending = new Map<string, { resolve(v: Record<string, unknown>): void; reject(e: unknown): void }>();
  private nextId = 1;
  private dead: ServerfsError | null = null;
  private failWith!: (e: ServerfsError) => void;
  readonly failure: Promise<never>;

  constructor(
    private readonly proc: ContainedProcess,
    private readonly handlers: StreamHandlers,
  ) {
    this.failure = new Promise<never>((_, reject) => (this.failWith = reject));
    this.failure.catch(() => {});
    void this.readLoop();
  }

  get closed(): boolean {
    return this.dead !== null;
  }

  fail(err: ServerfsError): void {
    if (this.dead !== null) return;
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.failWith(err);
  }

  sendUser(text: string): void {
    this.write({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" });
  }

  /** Our control request; resolves with the CLI's `response` body, bounded by `timeoutMs`. */
  control(request: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>> {
    if (this.dead !== null) return Promise.reject(this.dead);
    const requestId = `serverfs_${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        reject(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", `qodercli did not answer ${String(request.subtype).slice(0, 32)} in time`));
      }, timeoutMs);
      this.pending.set(requestId, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.write({ type: "control_request", request_id: requestId, request });
    });
  }

  endInput(): void {
    try {
      const r = this.proc.stdin.end();
      if (r instanceof Promise) r.catch(() => {});
    } catch {
      // closed
    }
  }

  private write(message: unknown): void {
    if (this.dead !== null) return;
    try {
      this.proc.stdin.write(`${JSON.stringify(message)}\n`);
      const r = this.proc.stdin.flush();
      if (r instanceof Promise) r.catch(() => this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "qodercli closed its input")));
    } catch {
      this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "qodercli closed its input"));
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
          if (line.length > 0) this.dispatch(line);
          if (this.dead !== null) return;
        }
        if (buf.length > MAX_LINE_BYTES) {
          this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", "qodercli sent a message larger than 32 MiB"));
          return;
        }
      }
    } catch {
      // same as the end of output
    }
    this.fail(new ServerfsError("AGENT_PROVIDER_DISCONNECTED", "qodercli exited or closed its output"));
  }

  private dispatch(line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", "qodercli wrote something that is not JSON on its protocol channel"));
      return;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      this.fail(new ServerfsError("AGENT_PROVIDER_ERROR", "qodercli wrote a non-object message"));
      return;
    }
    const m = msg as Record<string, unknown>;
    if (m.type === "control_request" && typeof m.request_id === "string" && m.request && typeof m.request === "object") {
      const requestId = m.request_id;
      this.handlers.onControlRequest(requestId, m.request as Record<string, unknown>).then(
        (response) => this.write({ type: "control_response", response: { subtype: "success", request_id: requestId, response } }),
        (err) =>
          this.write({ type: "control_response", response: { subtype: "error", request_id: requestId, error: err instanceof ServerfsError ? err.code : "refused" } }),
      );
      return;
    }
    if ((m.type === "control_cancel_request" || m.type === "control_cancel") && typeof m.request_id === "string") {
      this.handlers.onControlCancel(m.request_id);
      return;
    }
    if (m.type === "control_response" && m.response && typeof m.response === "object") {
      const r = m.response as { subtype?: unknown; request_id?: unknown; response?: unknown; error?: unknown };
      const p = typeof r.request_id === "string" ? this.pending.get(r.request_id) : undefined;
      if (!p) return;
      this.pending.delete(r.request_id as string);
      if (r.subtype === "success") p.resolve((r.response ?? {}) as Record<string, unknown>);
      else p.reject(new ServerfsError("AGENT_PROVIDER_ERROR", "qodercli refused a control request"));
      return;
    }
    this.handlers.onMessage(m);
  }
}
