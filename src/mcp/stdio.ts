// Runs the MCP server over this process's stdin/stdout until the client goes away or a signal
// arrives. Shutdown order matters (docs/maintainers/build.md): let in-flight requests answer,
// close the transport, end stdout and only exit once stdout has flushed — `process.exit` right
// after a write loses everything past one pipe buffer.
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { Registry } from "../config/types.ts";
import type { Logger } from "../log.ts";
import type { ServerfsMcp } from "./server.ts";
import type { FrameSource } from "./stdin-relay.ts";
import type { ShutdownReason, StdioLifecycle } from "./stdio-lifecycle.ts";
import { auditRefusedCall } from "./tool.ts";
import { GatedStdioTransport } from "./transport.ts";

export type { ShutdownReason } from "./stdio-lifecycle.ts";

/**
 * Time requests still running at stdin EOF get to finish with their real answer before they are
 * cancelled: each runs until its own deadline (search_timeout_seconds, the Bridge timeout), but
 * for at most this long. EOF is how a host asks politely (MCP's stdio shutdown), so it gets the
 * long grace.
 */
export const EOF_GRACE_MS = 5000;
/** The same after a signal, the host's firmer request, or when the transport closed itself. */
const SIGNAL_GRACE_MS = 400;
/** Time a cancelled request gets to return its coded error (a search stops at its next check). */
const DRAIN_ABORT_MS = 1000;
/** What a request still unanswered after the grace and the cancel gets, so no client waits for ever. */
export const SHUTDOWN_ERROR = {
  code: -32000,
  message: "Server shutting down: the request did not finish within the shutdown grace and was cancelled",
} as const;
/**
 * Last resort when stdout cannot be flushed (the reader is gone or stuck): exit anyway, this long
 * after the answers were due, so an MCP host never has to kill us.
 */
const FORCED_EXIT_MS = 3000;

/**
 * Largest single frame the transport accepts. A fixed 10 MiB (the SDK's default) is smaller than
 * one upload of an 8 MiB binary (base64 + JSON), so the cap is sized from the configured transfer
 * and write limits, with room for JSON escaping. A frame above it closes the transport (as the
 * SDK's transport does), and serve then exits.
 */
export function maxFrameBytes(registry: Registry): number {
  const binary = Math.max(0, ...registry.workdirs.filter((w) => w.binary_transfer_enabled).map((w) => w.max_binary_transfer_bytes));
  const text = Math.max(0, ...registry.workdirs.filter((w) => !w.read_only).map((w) => w.max_write_bytes));
  const envelope = 1024 * 1024;
  // base64 of `binary` bytes, doubled in case a client escapes '/' as '\/'; text may be \u-escaped (6 bytes per byte).
  return Math.max(10 * 1024 * 1024, 2 * 4 * Math.ceil(binary / 3) + envelope, 6 * text + envelope);
}

/**
 * Start-up work that no answer needs waits this long: a host's opening (initialize, tools/list)
 * is answered well within it, and an operator still sees the start-up warnings at once.
 */
const DEFERRED_START_MS = 100;
/** How long shutdown waits for the deferred start-up work (the root checks) to finish. */
const DEFERRED_WAIT_MS = 200;

/** The process side serve's stdio runs in, set up before the server was loaded (src/commands/serve.ts). */
export interface StdioSession {
  /** Where frames are read from (stdin, through the relay that kept what came before the server). */
  input: FrameSource;
  /** Signals, stdin's end, stdout's failure: bound to this server's shutdown once it runs. */
  lifecycle: StdioLifecycle;
  /**
   * Answers already written for requests in `input` (the opening, src/mcp/opening.ts), by id: the
   * SDK's own answers to them are compared and not written again.
   */
  answered?: ReadonlyMap<string | number, string>;
}

export interface ServeOptions {
  /**
   * Start-up work no answer depends on (the workdir root checks). It runs once, DEFERRED_START_MS
   * after start or when shutdown begins (which waits for it at most DEFERRED_WAIT_MS), whichever
   * comes first, so a host's opening requests never wait on it.
   */
  deferred?: () => Promise<void>;
  /**
   * Work for after the host's opening is answered (the temp sweep): started once, in a task of its
   * own, right after the first answer is written, so it never delays that answer.
   */
  afterFirstAnswer?: () => void;
  /** Called once, when the server sends its first answer of its own (GatedTransportOptions.onFirstOwnAnswer). */
  afterFirstOwnAnswer?: () => void;
}

/** Serve until shutdown; never resolves (the process exits from the shutdown path). */
export async function serveOverStdio(mcp: ServerfsMcp, logger: Logger, session: StdioSession, options: ServeOptions = {}): Promise<never> {
  let shutdown: (reason: ShutdownReason) => Promise<void> = async () => {};
  let deferred: Promise<void> | undefined;
  const runDeferred = (): Promise<void> => (deferred ??= (options.deferred?.() ?? Promise.resolve()).catch(() => {}));
  setTimeout(() => void runDeferred(), DEFERRED_START_MS).unref();
  // this transport reports every written answer, so a large answer holds its slot until then
  mcp.largeAnswers.reportsWrittenAnswers();
  const transport = new GatedStdioTransport(session.input, process.stdout, {
    onAnswerWritten: (id) => mcp.largeAnswers.written(id),
    // An oversized frame closes the transport (as the SDK's own does); without a reader we must not linger.
    onClosed: () => void shutdown("transport_closed"),
    ...(options.afterFirstAnswer ? { onFirstAnswer: () => void setImmediate(options.afterFirstAnswer!) } : {}),
    ...(options.afterFirstOwnAnswer ? { onFirstOwnAnswer: options.afterFirstOwnAnswer } : {}),
    maxFrameBytes: maxFrameBytes(mcp.registry),
    requests: mcp.requests,
    ...(session.answered ? { answered: session.answered, onAnsweredMismatch: () => logger.error("opening_answer_mismatch", {}) } : {}),
    onRefused: (verdict) => {
      // Only a method the server handles is named (it is ours, not caller text); the frame is never logged.
      const method = verdict.kind === "refuse" ? verdict.method : undefined;
      const bound = verdict.bound ? { bound: verdict.bound } : {};
      if (verdict.kind === "refuse") logger.warn("request_refused", { rpc_code: verdict.reply.error.code, ...(method ? { method } : {}), ...bound });
      else logger.warn("frame_dropped", { reason: verdict.reason, ...bound });
      if (method === "tools/call") auditRefusedCall(logger, "INVALID_PARAMS");
    },
  });
  // serveStdio owns the transport from here: it picks the connection's era from the opening
  // message (initialize → 2025, an enveloped request → 2026-07-28) and pins one server to it.
  const entry = serveStdio(mcp.build, {
    transport,
    // A malformed frame is the client's problem; its bytes (and the SDK's text about it) are not logged.
    onerror: () => logger.warn("transport_error", {}),
  });

  let stopping = false;
  const { lifecycle } = session;
  shutdown = async (reason: ShutdownReason): Promise<void> => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    const grace = reason === "stdin_eof" ? EOF_GRACE_MS : SIGNAL_GRACE_MS;
    setTimeout(() => process.exit(0), DEFERRED_WAIT_MS + grace + DRAIN_ABORT_MS + FORCED_EXIT_MS).unref();
    // A client that closed before any answer still gets the start-up warnings, within a bound.
    await Promise.race([runDeferred(), new Promise((resolve) => setTimeout(resolve, DEFERRED_WAIT_MS))]);
    // Every request the SDK was handed is waited for, not only the tool calls already running:
    // one read in the same chunk as the EOF may not have reached its handler yet.
    const pending = transport.pendingRequests;
    if (!lifecycle.stdoutGone && !(await transport.answeredWithin(grace))) {
      mcp.inflight.cancelAll();
      await transport.answeredWithin(DRAIN_ABORT_MS);
    }
    try {
      await entry.close();
    } catch {
      // Closing an already-closed transport is not an error worth reporting.
    }
    // Closing the SDK's server aborts what is left, and an aborted request is never answered by it.
    const left = transport.pendingRequests;
    if (!lifecycle.stdoutGone) transport.answerUnanswered(SHUTDOWN_ERROR);
    logger.info("shutdown", {
      reason,
      pending_requests: pending,
      ...(left > 0 ? { answered_by_shutdown: left } : {}),
      duration_ms: Math.round(performance.now() - started),
    });
    if (lifecycle.stdoutGone) process.exit(0);
    await transport.flushed();
    process.stdout.end(() => process.exit(0));
  };

  lifecycle.bind((reason) => void shutdown(reason));
  return new Promise<never>(() => {});
}
