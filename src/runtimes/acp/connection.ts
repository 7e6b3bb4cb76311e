// One client-side ACP connection to one agent child. It owns the SDK ClientApp wiring and turns
// every way the connection can break (stdout garbage, an oversized message, the child's stdout
// ending) into one `failure` that every outstanding request is raced against, so no await on the
// agent can outlive the agent.
import * as acp from "@agentclientprotocol/sdk";
import { ServerfsError } from "../../errors.ts";
import { agentRefused, protocolError } from "./protocol-errors.ts";
import { RAW_SESSION_UPDATE, childStream, type ChildPipes } from "./transport.ts";

/** A session/update as received: the envelope checked, the update itself left for the mapper. */
export interface RawSessionUpdate {
  sessionId: string;
  update: Record<string, unknown> & { sessionUpdate: string };
}

export interface PeerHandlers {
  /** Called synchronously in arrival order. */
  onSessionUpdate(n: RawSessionUpdate): void;
  onPermissionRequest(params: acp.RequestPermissionRequest, signal: AbortSignal): Promise<acp.RequestPermissionResponse>;
  /** `elicitation/create`, checked only for being an object; `signal` aborts on the agent's `$/cancel_request`. */
  onElicitation(params: unknown, signal: AbortSignal): Promise<acp.CreateElicitationResponse>;
  /** A request we never advertised (fs/*, terminal/*, extensions): already refused with -32601. */
  onRefusedRequest(method: string): void;
  /** Any inbound traffic at all (feeds the idle watchdog). */
  onActivity(): void;
  /** Private, bounded diagnostics. */
  onDiagnostic(kind: string, detail: string): void;
}

/**
 * Permission requests are checked only for their envelope here: a request without a tool call
 * (not about any tool) must still reach the human, and approvalFromRequest reads the rest
 * defensively and refuses option lists nobody could answer.
 */
function parsePermissionRequest(params: unknown): acp.RequestPermissionRequest {
  if (params && typeof params === "object") {
    const p = params as { sessionId?: unknown; options?: unknown };
    if (typeof p.sessionId === "string" && Array.isArray(p.options)) return params as acp.RequestPermissionRequest;
  }
  throw acp.RequestError.invalidParams(undefined, "malformed session/request_permission");
}

/** The form itself is read defensively by questionFromElicitation, which declines what it cannot show. */
function parseElicitationRequest(params: unknown): acp.CreateElicitationRequest {
  if (params && typeof params === "object" && !Array.isArray(params)) return params as acp.CreateElicitationRequest;
  throw acp.RequestError.invalidParams(undefined, "malformed elicitation/create");
}

/** A notification cannot be answered, so a malformed one becomes null (and a diagnostic), not a throw. */
function parseSessionUpdate(params: unknown): RawSessionUpdate | null {
  if (params && typeof params === "object") {
    const p = params as { sessionId?: unknown; update?: unknown };
    if (typeof p.sessionId === "string" && p.update && typeof p.update === "object") {
      const u = p.update as Record<string, unknown>;
      if (typeof u.sessionUpdate === "string") {
        return { sessionId: p.sessionId, update: u as RawSessionUpdate["update"] };
      }
    }
  }
  return null;
}

/** Method names are agent-chosen text: keep only a bounded, printable form for records. */
export function boundedMethodName(method: string): string {
  const clean = method.replace(/[^A-Za-z0-9_./$-]/g, "?");
  return clean.length > 64 ? `${clean.slice(0, 64)}…` : clean;
}

export class AcpPeer {
  readonly failure: Promise<never>;
  private failWith!: (err: ServerfsError) => void;
  private failed: ServerfsError | null = null;
  /** The byte stream itself is unusable (closed, contaminated or oversized): nothing more can be sent. */
  private dead = false;
  private readonly conn: acp.ClientConnection;

  constructor(pipes: ChildPipes, handlers: PeerHandlers, describeExit: () => ServerfsError) {
    this.failure = new Promise<never>((_, reject) => {
      this.failWith = (err) => {
        if (this.failed) return;
        this.failed = err;
        reject(err);
      };
    });
    // Nobody may be awaiting `failure` at the moment it rejects.
    this.failure.catch(() => {});

    const stream = childStream(pipes, {
      onViolation: () => {
        handlers.onDiagnostic("protocol_violation", "stdout carried a line that is not a JSON-RPC message");
        this.dead = true;
        this.fail(protocolError("stdout carried a line that is not a JSON-RPC message"));
      },
    });
    const app = acp
      .client({ name: "serverfs" })
      .onRequest(acp.methods.client.session.requestPermission, parsePermissionRequest, async ({ params, signal }) => {
        handlers.onActivity();
        return handlers.onPermissionRequest(params, signal);
      })
      .onRequest(acp.methods.client.elicitation.create, parseElicitationRequest, async ({ params, signal }) => {
        handlers.onActivity();
        return handlers.onElicitation(params, signal);
      })
      .onNotification(RAW_SESSION_UPDATE, parseSessionUpdate, ({ params }) => {
        handlers.onActivity();
        if (params === null) handlers.onDiagnostic("malformed_update", "a session/update without sessionId or update type was ignored");
        else handlers.onSessionUpdate(params);
      })
      .onRequest("*", ({ method }) => {
        handlers.onActivity();
        handlers.onRefusedRequest(boundedMethodName(method));
        throw acp.RequestError.methodNotFound(method);
      })
      .onNotification("*", ({ method }) => {
        handlers.onActivity();
        handlers.onDiagnostic("ignored_notification", boundedMethodName(method));
      });
    this.conn = app.connect(stream);
    void this.conn.closed.then(() => {
      this.dead = true;
      const reason = this.conn.signal.reason;
      if (reason instanceof acp.MessageTooLargeError) {
        this.fail(protocolError(`a message exceeded ${reason.maxMessageBytes} bytes`));
      } else {
        this.fail(describeExit());
      }
    });
  }

  get isFailed(): ServerfsError | null {
    return this.failed;
  }

  get transportDead(): boolean {
    return this.dead;
  }

  fail(err: ServerfsError): void {
    this.failWith(err);
  }

  /**
   * Send a request and wait for its answer, the connection's failure, or `timeoutMs`. Agent-side
   * errors become `mapError(err)` (default: a bounded AGENT_PROVIDER_ERROR).
   */
  async request<M extends acp.AgentRequestMethod>(
    method: M,
    params: acp.AgentRequestParamsByMethod[M],
    options: { timeoutMs?: number; onTimeout?: () => ServerfsError; mapError?: (err: unknown) => ServerfsError } = {},
  ): Promise<acp.AgentRequestResponsesByMethod[M]> {
    if (this.failed) throw this.failed;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const racers: Promise<acp.AgentRequestResponsesByMethod[M]>[] = [
      this.conn.agent.request(method, params).catch((err: unknown) => {
        if (this.failed) throw this.failed;
        throw (options.mapError ?? ((e: unknown) => agentRefused(method, e)))(err);
      }),
      this.failure,
    ];
    if (options.timeoutMs !== undefined) {
      const onTimeout = options.onTimeout ?? (() => new ServerfsError("AGENT_PROVIDER_ERROR", `the agent did not answer ${method} in time`));
      racers.push(
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(onTimeout()), options.timeoutMs);
        }),
      );
    }
    try {
      return await Promise.race(racers);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /** `session/cancel` is a notification: fire it and never wait on a dying agent. */
  async notifyCancel(sessionId: string): Promise<void> {
    if (this.dead) return;
    try {
      await this.conn.agent.notify(acp.methods.agent.session.cancel, { sessionId });
    } catch {
      // A dead transport cannot take the notification; the containment stop follows anyway.
    }
  }

  /**
   * `session/close` at the end of a task, even after a failure (the transport may still carry it):
   * resolves true when the agent answered, false when it refused, the transport is gone or
   * `timeoutMs` passed. Never throws.
   */
  async closeSession(sessionId: string, timeoutMs: number): Promise<boolean> {
    if (this.dead) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await Promise.race([
        this.conn.agent.request(acp.methods.agent.session.close, { sessionId }).then(
          () => true,
          () => false,
        ),
        this.conn.closed.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        }),
      ]);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  close(): void {
    try {
      this.conn.close();
    } catch {
      // Already closed.
    }
  }
}
