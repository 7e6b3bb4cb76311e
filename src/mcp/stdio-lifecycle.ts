// The process side of serve's stdio session: the signals, stdin's end, stdout's failure and the
// process-wide error hooks. Installed before serve answers anything (the opening, opening.ts, is
// answered before the full server is loaded), so a host that closes stdin or sends SIGTERM at any
// moment gets the same orderly shutdown. A request that comes before the server is bound is kept
// and passed to it when it binds; `onEarlyRequest` is told at once, so the opening can end and
// the server come up to perform it.
import { errnoCode } from "../errors.ts";
import type { Logger } from "../log.ts";

export type ShutdownReason = "stdin_eof" | "stdout_closed" | "SIGTERM" | "SIGINT" | "SIGHUP" | "transport_closed";

const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

export class StdioLifecycle {
  /** A write to stdout failed with EPIPE: the client can no longer read anything. */
  stdoutGone = false;
  private shutdown: ((reason: ShutdownReason) => void) | undefined;
  private early: ShutdownReason | undefined;
  private earlyListener: (() => void) | undefined;

  constructor(private readonly logger: Logger) {}

  /** Hook the process. Call once, before anything is written to stdout. */
  install(): this {
    // Each response waiting on a slow reader holds one 'drain' listener; many are legitimate.
    process.stdout.setMaxListeners(0);
    // Bun prints runtime warnings as free text on stderr whatever listeners exist; replacing
    // emitWarning is the one hook it honours, and keeps stderr one JSON object per line.
    process.emitWarning = ((warning: string | Error) => {
      this.logger.warn("runtime_warning", { name: typeof warning === "string" ? "Warning" : warning.name });
    }) as typeof process.emitWarning;
    process.stdout.on("error", this.onStdoutGone);
    process.on("uncaughtException", (err) => {
      if (errnoCode(err) === "EPIPE") return this.onStdoutGone();
      this.logger.error("uncaught_exception", { error_class: err?.constructor?.name ?? typeof err });
    });
    process.on("unhandledRejection", (err) => {
      // The SDK's send() rejects with EPIPE when the client closed its end of our stdout.
      if (errnoCode(err) === "EPIPE") return this.onStdoutGone();
      this.logger.error("unhandled_rejection", { error_class: (err as object)?.constructor?.name ?? typeof err });
    });
    for (const signal of SIGNALS) process.on(signal, () => this.request(signal));
    process.stdin.on("end", () => this.request("stdin_eof"));
    process.stdin.on("close", () => this.request("stdin_eof"));
    return this;
  }

  /** Told (once) of a shutdown request that comes before `bind`. */
  onEarlyRequest(listener: () => void): void {
    this.earlyListener = listener;
    if (this.early !== undefined) listener();
  }

  /** From here on shutdown requests go to `shutdown`; one that came earlier goes now. */
  bind(shutdown: (reason: ShutdownReason) => void): void {
    this.shutdown = shutdown;
    if (this.early !== undefined) shutdown(this.early);
  }

  request(reason: ShutdownReason): void {
    if (this.shutdown !== undefined) return this.shutdown(reason);
    if (this.early !== undefined) return;
    this.early = reason;
    this.earlyListener?.();
  }

  private readonly onStdoutGone = (): void => {
    this.stdoutGone = true;
    this.request("stdout_closed");
  };
}
