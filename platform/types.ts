// The platform seams every other layer uses. Implementations live in platform/posix,
// platform/linux, platform/darwin and platform/windows; platform/index.ts picks one at run time.
// Nothing outside platform/ may call bun:ffi or signal a process group directly.

/** What a provider child is started with. Never a shell string. */
export interface SpawnSpec {
  /** argv[0] is an absolute executable path (or a name resolved on PATH by the caller). */
  argv: string[];
  cwd: string;
  /** Complete environment for the child; the caller scrubs it with `scrubEnv` first. */
  env: Record<string, string>;
  /** Per-task marker: set as SERVERFS_RUN_ID in the child env and used to sweep leftovers after a crash. */
  runId: string;
  /** Bytes of stderr kept (ring buffer of the most recent bytes). Default 64 KiB. */
  stderrLimitBytes?: number;
}

export interface StopEvidence {
  /** True only when no live (non-zombie) member of the containment set is left. */
  proved: boolean;
  /** Members still alive when proof failed (empty when proved). */
  survivors: Array<{ pid: number; command: string }>;
  /** How the stop ended: "term" (grace sufficed), "kill", or "already-exited". */
  method: "term" | "kill" | "already-exited";
  elapsedMs: number;
  /**
   * What the proof rests on: "cgroup" (the task's own cgroup v2 was found empty), "freeze" (every
   * member was stopped before it was killed, then looked for again), "job" (a Windows Job Object).
   */
  proof?: "cgroup" | "freeze" | "job";
}

/** What this host's stop proofs rest on, and why (for `doctor` and bridge.status). */
export interface StopProofReport {
  path: "cgroup" | "freeze" | "job";
  /** Where the task groups live, or what ruled them out. Never a secret. */
  reason: string;
}

export interface ContainedProcess {
  readonly pid: number;
  readonly runId: string;
  readonly stdin: import("bun").FileSink;
  readonly stdout: ReadableStream<Uint8Array>;
  /**
   * The most recent stderr bytes, bounded by stderrLimitBytes. Once stop() has proved the tree
   * stopped, they include everything it wrote: the stop reads the pipe to its end first.
   */
  stderrTail(): Uint8Array;
  /** Resolves with the leader's exit code (or signal as 128+n) when the leader exits. */
  readonly exited: Promise<number>;
  /**
   * Stop every member of the containment set: TERM, wait up to `graceMs`, then KILL, then prove
   * no live member is left. Never throws; failure to prove is reported in the evidence.
   */
  stop(graceMs: number): Promise<StopEvidence>;
  /** Live members right now (leader, its group, descendants, marked adoptees). */
  members(): Promise<number[]>;
}

export interface SweepResult {
  found: number;
  evidence: StopEvidence;
}

export interface Containment {
  spawn(spec: SpawnSpec): Promise<ContainedProcess>;
  /** After a Bridge crash: find processes carrying any of these run markers and stop them with proof. */
  sweep(runIds: string[], graceMs: number): Promise<SweepResult>;
}

/**
 * Where processes started outside any task (runtime probes, model discovery) are written down, so
 * a restarted Bridge can sweep what a crash left behind. `record` runs before the spawn and must be
 * durable when it returns (throwing refuses the spawn); `clear` runs once the process's containment
 * set was proved stopped (or the spawn failed) and never throws. A journal may decline a run id
 * (e.g. a task's, which task reconciliation sweeps) by doing nothing.
 */
export interface SpawnJournal {
  record(runId: string): void;
  clear(runId: string): void;
}

/** An exclusive, non-blocking, non-inheritable file lock (flock on POSIX, LockFileEx on Windows). */
export interface FileLease {
  readonly path: string;
  release(): void;
}

export interface LeaseProvider {
  /** Returns null when another holder has it (EWOULDBLOCK / ERROR_LOCK_VIOLATION). */
  tryAcquire(path: string): FileLease | null;
  /**
   * Added by the platform layer: like tryAcquire, but never creates the file. For readers of a
   * lock file the Bridge pre-created (MCP mutations): a missing file is AGENT_LOCK_UNAVAILABLE.
   * Both throw LOCK_PATH_UNSAFE for a symlink or non-regular file.
   */
  tryAcquireExisting(path: string): FileLease | null;
}

export interface PeerIdentity {
  uid: number | null;
  gid: number | null;
  pid: number | null;
}

// ---- Local streams: the Bridge endpoint's transport (platform/local-stream.ts) ----

/** Who is at the other end, as the kernel says: its pid, and whether it runs as the current user. */
export interface StreamPeer {
  /** null: the pid could not be read (then sameUser is false). */
  pid: number | null;
  /** False also when the peer's user cannot be read: a caller deciding trust treats that as "not us". */
  sameUser: boolean;
}

/** One end of a connected local stream (a pipe, or a unix socket), as the Bridge drives it. */
export interface LocalStream {
  /** The peer as the kernel identifies it, or null where the transport cannot (a unix socket here). */
  readonly peer: StreamPeer | null;
  /** Bytes taken now (at most 64 KiB); 0 while a write is on its way: `onDrain` follows. */
  write(data: Uint8Array): number;
  /** Close once the write on its way has completed (what was written stays readable for the peer). */
  end(): void;
  /** Close at once, cancelling anything on its way. */
  destroy(): void;
  onData: (bytes: Uint8Array) => void;
  onDrain: () => void;
  /** Called once, whoever closed. */
  onClose: () => void;
  readonly closed: boolean;
}

export interface LocalListener {
  close(): Promise<void>;
}

/** Why a client could not open a local endpoint: the caller maps these to its own codes. */
export type OpenFailure = "absent" | "busy" | "refused";

