// Ending a provider child's stdin: the polite "we are done" every well-behaved agent exits on.
// The child may already have closed its end (it exited), which is not an error here.
import type { FileSink } from "bun";

export function closeChildInput(pipes: { stdin: FileSink }): void {
  try {
    const r = pipes.stdin.end();
    if (r instanceof Promise) r.catch(() => {});
  } catch {
    // Already closed.
  }
}
