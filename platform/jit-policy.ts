// The JIT policy the compiled executable starts with, and the switch back to the normal one.
//
// Why: start-up is code that runs once (module bodies, the MCP SDK building its few hundred
// schemas, the first pass over the host's opening), yet much of it runs often enough for
// JavaScriptCore to optimize it with DFG, on compiler threads that then compete for a 2-core
// machine with the start-up itself and with the search thread's boot. Measured on the compiled
// serve (2-core VM): 65 DFG compiles, about 58 ms of compiler time, before the first tool call was
// answered. build/compile.ts bakes STARTUP_JIT_POLICY in (`--compile-jit-policy`), which scales
// every tier-up threshold, so that code stays in the interpreter and the baseline JIT. A thread
// that runs the same code again and again calls normalJitPolicy() once its start-up is over: what
// it runs from then on (the search loops, serve's request path) is optimized as usual.
//
// The policy belongs to each thread's engine: the threads that run the same code again and again
// (serve's main thread, the search thread, the Windows pipe thread, the macOS fork watcher) call
// this themselves; kept at 16 for good, a warm serve's small calls ran 20-40% slower. The
// Bridge's main thread never does: each step of a task's path runs once per task, and at 16 the
// Bridge spent 3.5-4.3 ms less CPU per task (22-23 against 26 ms quiet, 31 against 35 ms with
// a busy loop per core) for the same latency. Short commands (render-config, doctor, tasks, ...)
// never call it either: they are start-up only.

/** The tier-up threshold scale the compiled executable starts with (1 is the engine's normal). */
export const STARTUP_JIT_POLICY = 16;

/** Back to the engine's normal tier-up thresholds on this thread, for good. A no-op from source. */
export function normalJitPolicy(): void {
  const setJITPolicy = (Bun as { unsafe?: { setJITPolicy?: (scale: number) => void } }).unsafe?.setJITPolicy;
  if (typeof setJITPolicy === "function") setJITPolicy(1);
}
