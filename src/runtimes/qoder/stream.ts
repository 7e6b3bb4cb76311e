// The qodercli non-interactive streaming protocol (`--print --input-format stream-json
// --output-format stream-json --permission-prompt-tool stdio`): one JSON object per line each
// way, Claude-Code-shaped (docs/runtimes.md, Qoder). The CLI sends `system`/`assistant`/`result`
// messages plus `control_request {subtype:"can_use_tool"}` (answered with `control_response`)
// and `control_cancel_request`; we send `user` messages and our own control requests
// (`interrupt`, `set_proxy`).
import type { ContainedProcess } from "../../../platform/types.ts";
import { ServerfsError } from "../../errors.ts";
import { JsonLineConnection } from "../kernel/json-lines.ts";

const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface StreamHandlers {
  onMessage(message: Record<string, unknown>): void;
  /** A control request from the CLI; the result becomes the control_response body. */
  onControlRequest(requestId: string, request: Record<string, unknown>): Promise<Record<string, unknown>>;
  onControlCancel(requestId: string): void;
}

export class QoderStream extends JsonLineConnection {
  private nextId = 1;

  constructor(
    proc: ContainedProcess,
    private readonly handlers: StreamHandlers,
  ) {
    super(proc, "qodercli", MAX_LINE_BYTES);
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
          resolve(v as Record<string, unknown>);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.write({ type: "control_request", request_id: requestId, request });
    });
  }

  protected override dispatch(m: Record<string, unknown>): void {
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
