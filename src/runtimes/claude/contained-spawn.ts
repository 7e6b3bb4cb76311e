// The Claude Agent SDK starts the Claude Code CLI itself. Its `spawnClaudeCodeProcess` hook lets
// us start it instead, so the CLI and every tool it runs land in the task's containment set
// (TaskContext.spawn) and can be proved stopped. The hook is synchronous while a contained spawn
// is not, so this facade hands the SDK Node streams at once and connects them when the child is
// up: writes queue in order until then, and a failed spawn surfaces as the SDK's 'error' event.
import { EventEmitter } from "node:events";
import { PassThrough, Writable } from "node:stream";
import type { ContainedProcess } from "../../../platform/types.ts";

export class ContainedSpawn extends EventEmitter {
  readonly stdin: Writable;
  readonly stdout = new PassThrough();
  private _killed = false;
  private _exitCode: number | null = null;

  constructor(readonly started: Promise<ContainedProcess>) {
    super();
    let inputClosed = false;
    this.stdin = new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        started.then(
          async (proc) => {
            if (inputClosed) return cb();
            try {
              proc.stdin.write(chunk);
              await proc.stdin.flush();
            } catch {
              // The CLI exited; the SDK learns that from 'exit' and the end of stdout.
              inputClosed = true;
            }
            cb();
          },
          () => cb(),
        );
      },
      final: (cb) => {
        started.then(
          (proc) => {
            inputClosed = true;
            try {
              const r = proc.stdin.end();
              if (r instanceof Promise) r.catch(() => {});
            } catch {
              // already closed
            }
            cb();
          },
          () => cb(),
        );
      },
    });
    started.then(
      (proc) => {
        void this.pump(proc);
        proc.exited.then((code) => {
          this._exitCode = code;
          this.emit("exit", code, null);
        });
      },
      (err: unknown) => {
        this.stdout.end();
        queueMicrotask(() => this.emit("error", err instanceof Error ? err : new Error("spawn failed")));
      },
    );
  }

  get killed(): boolean {
    return this._killed;
  }

  get exitCode(): number | null {
    return this._exitCode;
  }

  get signalCode(): null {
    return null;
  }

  /** Any kill the SDK asks for stops the whole containment set (TERM, grace, KILL). */
  kill(signal: string): boolean {
    this._killed = true;
    this.started.then((proc) => void proc.stop(signal === "SIGKILL" ? 0 : 2000)).catch(() => {});
    return true;
  }

  private async pump(proc: ContainedProcess): Promise<void> {
    try {
      for await (const chunk of proc.stdout) {
        if (!this.stdout.write(chunk)) await new Promise((r) => this.stdout.once("drain", r));
      }
    } catch {
      // output ended abnormally: same as the end
    }
    this.stdout.end();
  }
}
