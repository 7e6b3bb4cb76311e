// Writer leases on the Bridge side: lock files are pre-created at start (0600 in a 0700 dir) so
// task execution and `serve` only ever open existing files; a held lease is an exclusive,
// non-blocking, non-inheritable lock (platform LeaseProvider).
import fs from "node:fs";
import path from "node:path";
import { ServerfsError, errnoCode } from "../errors.ts";
import type { FileLease, LeaseProvider } from "../../platform/types.ts";
import type { Registry } from "../config/types.ts";
import { leaseFiles } from "./deployment.ts";

export function ensurePrivateDir(dir: string, code: "LOCK_PATH_UNSAFE" | "STATE_DIRECTORY_UNSAFE"): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.isSymbolicLink() || (process.getuid && st.uid !== process.getuid())) {
    throw new ServerfsError(code, "a private directory is not a directory owned by this user");
  }
  fs.chmodSync(dir, 0o700);
}

/** Open the lock file without following a symlink and insist it is a regular file we own. */
export function checkLockFile(lockFile: string, create: boolean): void {
  const flags = fs.constants.O_RDWR | fs.constants.O_NOFOLLOW | (create ? fs.constants.O_CREAT : 0);
  let fd: number;
  try {
    fd = fs.openSync(lockFile, flags, 0o600);
  } catch (err) {
    throw new ServerfsError("LOCK_PATH_UNSAFE", `lock file cannot be opened (${errnoCode(err) ?? "error"})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new ServerfsError("LOCK_PATH_UNSAFE", "lock file is not a regular file");
    if (create) fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
}

export class LeaseManager {
  private readonly held = new Map<string, FileLease>();

  constructor(
    private readonly registry: Registry,
    private readonly provider: LeaseProvider,
  ) {}

  /** Create the lock and guard directories and one lock file per workdir. */
  precreate(): void {
    for (const w of this.registry.workdirs) {
      const files = leaseFiles(this.registry, w.alias);
      ensurePrivateDir(path.dirname(files.lockFile), "LOCK_PATH_UNSAFE");
      ensurePrivateDir(path.dirname(files.guardFile), "LOCK_PATH_UNSAFE");
      checkLockFile(files.lockFile, true);
    }
  }

  isHeld(alias: string): boolean {
    return this.held.has(alias);
  }

  acquire(alias: string): void {
    if (this.held.has(alias)) throw new ServerfsError("WORKDIR_BUSY", `workdir ${alias} is busy`);
    const { lockFile } = leaseFiles(this.registry, alias);
    checkLockFile(lockFile, false);
    const lease = this.provider.tryAcquire(lockFile);
    if (!lease) throw new ServerfsError("WORKDIR_BUSY", `workdir ${alias} is busy`);
    this.held.set(alias, lease);
  }

  release(alias: string): void {
    const lease = this.held.get(alias);
    if (!lease) return;
    this.held.delete(alias);
    lease.release();
  }

  releaseAll(): void {
    for (const alias of [...this.held.keys()]) this.release(alias);
  }
}
