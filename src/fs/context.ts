// Per-call preparation shared by every operation, in the one documented check order:
// WORKDIR_NOT_FOUND → WORKDIR_READ_ONLY → BINARY_TRANSFER_DISABLED → path policy →
// ROOT_MUTATION_NOT_ALLOWED → INVALID_PATH (file tools only). Argument checks, the mutation gate and the filesystem come after,
// inside each operation.

import fs from "node:fs";
import type { Registry, Workdir } from "../config/types.ts";
import { errnoCode } from "../errors.ts";
import { fail, workdirNotFound } from "./fail.ts";
import type { FsNative } from "../../platform/fs/native.ts";
import { namesDirectory, normalizeRequestPath, type PathPolicy } from "./policy.ts";
import { workdirPolicy, type CaseSensitivity } from "./workdir-policy.ts";

export interface WorkdirState {
  readonly workdir: Workdir;
  readonly policy: PathPolicy;
  /** How the policy matches names, probed once when the workspace is built. */
  readonly caseSensitivity: CaseSensitivity;
  rootFd: number | null;
}

export interface Target {
  readonly wd: WorkdirState;
  readonly alias: string;
  /** Normalised workdir-relative components; empty = the root. */
  readonly parts: string[];
  /** `parts.join("/")`: what outputs and messages show. */
  readonly rel: string;
  /** The caller's path ends in `/`, `/.` or `/..`: it can only name a directory (as for the kernel). */
  readonly directoryOnly: boolean;
}

export interface PrepareOptions {
  mutation?: boolean;
  binary?: boolean;
  /** The target must be a file (read, created, replaced or deleted): a directory-only path is INVALID_PATH. */
  file?: boolean;
}

export class Workspace {
  private readonly byAlias = new Map<string, WorkdirState>();
  /** Directories (dev:ino) this service already swept of dead writers' temps (./temp-sweep.ts). */
  readonly sweptDirectories = new Set<string>();

  constructor(
    readonly registry: Registry,
    readonly native: FsNative,
  ) {
    for (const w of registry.workdirs) this.byAlias.set(w.alias, { workdir: w, ...workdirPolicy(w), rootFd: null });
  }

  lookup(alias: string): WorkdirState {
    const wd = typeof alias === "string" ? this.byAlias.get(alias) : undefined;
    if (wd === undefined) throw workdirNotFound(String(alias));
    return wd;
  }

  prepare(alias: string, rawPath: string | undefined, opts: PrepareOptions = {}): Target {
    const wd = this.lookup(alias);
    if (opts.mutation && wd.workdir.read_only) throw fail("WORKDIR_READ_ONLY", alias, rawPath ?? "");
    if (opts.binary && !wd.workdir.binary_transfer_enabled) throw fail("BINARY_TRANSFER_DISABLED", alias, rawPath ?? "");
    const raw = rawPath ?? "";
    if (typeof raw !== "string") throw fail("INVALID_ARGUMENT", alias, "", "path must be a string");
    const parts = normalizeRequestPath(alias, raw);
    const rel = parts.join("/");
    wd.policy.check(alias, parts, rel);
    if (opts.mutation && parts.length === 0) throw fail("ROOT_MUTATION_NOT_ALLOWED", alias, raw);
    const directoryOnly = namesDirectory(raw);
    if (opts.file && directoryOnly) throw fail("INVALID_PATH", alias, raw);
    return { wd, alias, parts, rel, directoryOnly };
  }

  /** The workdir root descriptor, opened once by its configured path (the only path opened by name). */
  rootFd(t: Target): number {
    const wd = t.wd;
    if (wd.rootFd !== null) return wd.rootFd;
    try {
      // allow_hidden shows what the OS itself marks hidden too, as it shows dot-files
      wd.rootFd = this.native.openRoot(wd.workdir.path, { crossMounts: wd.workdir.cross_mounts, showOsHidden: wd.workdir.allow_hidden });
    } catch (err) {
      const code = errnoCode(err);
      if (code === "ELOOP") throw fail("SYMLINK_NOT_ALLOWED", t.alias, t.rel, "workdir root is a symlink");
      if (code === "ENOENT") throw fail("PATH_NOT_FOUND", t.alias, t.rel, "workdir root does not exist");
      if (code === "ENOTDIR") throw fail("NOT_A_DIRECTORY", t.alias, t.rel, "workdir root is not a directory");
      if (code === "EMFILE" || code === "ENFILE") throw fail("RESOURCE_EXHAUSTED", t.alias, t.rel);
      throw fail("ACCESS_DENIED", t.alias, t.rel, "workdir root cannot be opened");
    }
    return wd.rootFd;
  }

  /** Release every root descriptor (tests, shutdown). */
  close(): void {
    for (const wd of this.byAlias.values()) {
      if (wd.rootFd !== null) closeQuietly(wd.rootFd);
      wd.rootFd = null;
    }
  }
}

export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // best effort
  }
}

/** Run `fn` with a descriptor that is closed afterwards whatever happens. */
export function withFd<T>(fd: number, fn: (fd: number) => T): T {
  try {
    return fn(fd);
  } finally {
    closeQuietly(fd);
  }
}
