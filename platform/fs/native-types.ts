// The descriptor seam between file operations and the OS, as types: what every backend
// (resolve-linux.ts, resolve-darwin.ts, resolve-windows.ts) implements and the file layer calls.
// native.ts chooses the backend; this module imports nothing, so no backend's import of these
// types leads back to the selector.
/** What an open is for; each backend maps it to its own flags. */
export type OpenKind =
  /** Any object, the final symlink itself included (lstat semantics), metadata only. */
  | "object"
  /** A directory usable as the base of further *at calls (no read permission needed). */
  | "dirBase"
  /** A directory whose entries will be listed. */
  | "dirList"
  /** A regular file for reading; never blocks on a FIFO. */
  | "read"
  /** A brand-new file: exclusive create, no follow. */
  | "createExclusive";


export interface DirEntryInfo {
  name: string;
  /** From the directory entry when the filesystem reports it; "unknown" otherwise. */
  kind: "file" | "directory" | "symlink" | "other" | "unknown";
}

/** A held writers' directory lock (FsNative.tryLockDirectory); release is idempotent. */
export interface DirectoryLock {
  release(): void;
}

export interface RootOptions {
  /** false: no lookup beneath this root (or beneath anything opened from it) crosses a mount point. */
  crossMounts?: boolean;
  /**
   * Where the OS marks files hidden apart from their names (Windows FILE_ATTRIBUTE_HIDDEN and
   * FILE_ATTRIBUTE_SYSTEM): true lists them; false or absent, readDirSmallest (list, find, search,
   * tree) never offers them beneath this root. readDir still reports them (an emptiness check
   * must see every entry). Backends without such a mark ignore it.
   */
  showOsHidden?: boolean;
}

export interface FsNative {
  /** The trusted anchor: the configured workdir root, opened by name once. Must not itself be a symlink. */
  openRoot(hostPath: string, opts?: RootOptions): number;
  /** Open `parts` beneath `dirfd` (empty parts = the directory itself), never following a symlink. */
  openBeneath(dirfd: number, parts: readonly string[], kind: OpenKind, mode?: number): number;
  /** Re-open an "object" descriptor of a regular file for reading (same inode, no path lookup). */
  reopenForRead(objectFd: number): number;
  /** Entries of a directory opened with "dirList" (never "." or ".."; never a mount point when confined). */
  readDir(dirFd: number): DirEntryInfo[];
  /**
   * The `k` smallest entries, in code-point name order, of a directory opened with "dirList",
   * among those `keep` accepts, plus how many it accepted (`visible`). As with readDir, "." and
   * "..", and in a root opened with crossMounts = false every mount point, are never entries.
   * This is how list_directory, find_files and search_text read directories: memory must stay
   * O(k) however many entries the directory holds, so a backend feeds its native listing in
   * bounded chunks to selectInSteps (dir-select.ts), which offers a few hundred entries per
   * step(); the caller checks its deadline and yields between steps. Linux: getdents64 into one
   * reused buffer. macOS: getattrlistbulk on the held descriptor, one 64 KiB buffer per chunk. Every
   * backend, the Windows one included, must implement it.
   */
  readDirSmallest(dirFd: number, k: number, keep?: (name: string) => boolean, fresh?: boolean): DirSmallest;
  /**
   * lstat semantics for `parts` beneath `dirfd` (empty parts = the directory itself) without
   * opening the object: where an "object" open cannot reach every file type (macOS has no O_PATH,
   * so unreadable files and unix sockets refuse it), stat_file goes through this instead. Absent
   * where an "object" open works for every type (Linux O_PATH, Windows).
   */
  statBeneath?(dirfd: number, parts: readonly string[]): import("node:fs").BigIntStats;
  /** lstat of a child name of a held directory. */
  lstatChild(dirFd: number, name: string): import("node:fs").BigIntStats;
  linkAt(dirFd: number, oldName: string, newName: string): void;
  renameAt(dirFd: number, oldName: string, newName: string): void;
  /**
   * Move the entry `srcName` of the held directory `srcDirFd` (a file or a directory, never
   * followed) to `dstName` in the held directory `dstDirFd`, refusing atomically, in the kernel,
   * to replace anything already there (EEXIST). Linux: renameat2(RENAME_NOREPLACE); macOS:
   * renameatx_np(RENAME_EXCL); Windows: FILE_RENAME_INFORMATION on the source's own handle with
   * RootDirectory = the destination handle and no replace. A filesystem that cannot refuse
   * replacement fails (EINVAL/ENOTSUP) rather than falling back to a rename that could overwrite.
   * Another filesystem is EXDEV.
   */
  renameNoReplace(srcDirFd: number, srcName: string, dstDirFd: number, dstName: string): void;
  unlinkAt(dirFd: number, name: string, isDir: boolean): void;
  mkdirAt(dirFd: number, name: string, mode: number): void;
  fchmod(fd: number, mode: number): void;
  fchown(fd: number, uid: number, gid: number): void;
  listXattrs(fd: number): Map<string, Buffer>;
  setXattr(fd: number, name: string, value: Buffer): void;
  fsync(fd: number): void;
  /** Close a descriptor this backend opened (search's hot path; errors ignored). */
  closeFast(fd: number): void;
  /**
   * Open one child of a held directory for reading, exactly as openBeneath(dirFd, [name], "read")
   * would, for a descriptor that is only read and closed (never a lookup base): search's hot path,
   * where openBeneath's general form (parts, kinds, descriptor bookkeeping) cost more per file
   * than the lookup itself. Absent: callers use openBeneath.
   */
  openReadChild?(dirFd: number, name: string): number;
  /** Which extended attributes a replacement must carry over. */
  preservesXattr(name: string): boolean;
  /**
   * Give the open file `fd`, created beneath `dirFd`, the name `newName` there, through its own
   * handle (Windows: FILE_RENAME_INFORMATION on the handle we wrote, never a by-name reopen of the
   * temp). `replace` false never overwrites. Absent where publication links and renames by name.
   */
  publishFd?(fd: number, dirFd: number, newName: string, replace: boolean): void;
  /** Copy an ACL kept outside the xattr namespace (macOS); absent where ACLs are xattrs. */
  copyAcl?(fromFd: number, toFd: number): void;
  /**
   * One attempt, never waiting, at the exclusive lock every serverfs writer takes on the directory
   * held as `dirFd` from its revision check through its rename or unlink there (src/fs/dir-lock.ts
   * waits and retries). null: another holder has it. It is advisory (only serverfs writers take
   * it), not inherited by child processes, and the kernel drops it when the holder dies.
   * Linux and macOS: flock(LOCK_EX|LOCK_NB) on a read-only descriptor of that directory opened for
   * the lock alone (dir-lock-posix.ts); no file is created and `lockFilesDir` is unused.
   * Windows: LockFileEx on a lock file named after the directory's identity in `lockFilesDir`,
   * created when missing (dir-lock-windows.ts).
   */
  tryLockDirectory(dirFd: number, lockFilesDir: string): DirectoryLock | null;
}

export interface DirSelection {
  /** The k smallest accepted entries, in code-point name order. */
  entries: DirEntryInfo[];
  /** How many entries were accepted in all (≥ entries.length). */
  visible: number;
}

/**
 * A directory read in bounded steps: call step() until it returns false (the caller may yield to
 * the event loop or check a deadline between steps), then result().
 */
export interface DirSmallest {
  step(): boolean;
  result(): DirSelection;
}
