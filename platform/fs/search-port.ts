// What search_text needs of the OS beyond FsNative, behind one selector so src/fs names no OS:
//
// - A second thread's way to open files below directory descriptors the main thread holds. The
//   search worker has no share in the main thread's descriptor bookkeeping, so it may only open
//   where the kernel itself checks each open: Linux's openat2 (RESOLVE_BENEATH, no symlinks, no
//   magic links, and RESOLVE_NO_XDEV for a cross_mounts = false workdir). Elsewhere there is no
//   worker opener and every batch is scanned on the main thread, with the same results.
// - The same thread's way to walk below a workdir root the main thread holds (find_files hands it
//   sub-trees): the platform's FsNative, told whether that root is confined to its mount.
// - Whether a held directory descriptor refuses mount crossings, which the worker's opens must
//   repeat.
// - The per-file and per-entry syscall wrappers that search keeps below JavaScriptCore's top JIT
//   tier (src/fs/search/scan-tiers.ts says why). They are this module's to list, so no caller
//   names another module's private functions.
import { select } from "../os.ts";
import { SmallestEntries } from "./dir-select.ts";
import { DirentReader } from "./dirents-linux.ts";
import { close, getdents64, hasOpenat2, openat2, statFacts, wrapperHelpers } from "./linux.ts";
import type { FsNative } from "./native-types.ts";
import { adoptConfinement, isConfined, linuxNative, openReadBeneath } from "./resolve-linux.ts";
import { scanIo } from "./scan-io.ts";

/** How the search worker opens and closes the files it scans. */
export interface WorkerOpener {
  /** Open `name` in the held directory `dirFd` for reading, as FsNative.openBeneath(dirFd, [name], "read") would. */
  openRead(dirFd: number, name: string, noXdev: boolean): number;
  close(fd: number): void;
}

const linuxOpener: WorkerOpener = { openRead: openReadBeneath, close };

/** The worker's opener, or null where searches must stay on the main thread (probed once per call site; cheap). */
export function workerOpener(): WorkerOpener | null {
  return select<WorkerOpener | null>({
    linux: () => (hasOpenat2() ? linuxOpener : null),
    other: () => null,
  });
}

/**
 * The worker's filesystem port for walking below the held root `rootFd`, whose opens refuse to
 * cross a mount when `noXdev` (what refusesMountCrossing said on the main thread); null where
 * there is no worker opener. Every directory the walk opens goes through openat2 beneath it, so
 * the kernel checks each one as it does the scanner's opens.
 */
export function workerWalkNative(rootFd: number, noXdev: boolean): FsNative | null {
  if (workerOpener() === null) return null;
  return select<FsNative | null>({
    linux: () => {
      adoptConfinement(rootFd, noXdev);
      return linuxNative;
    },
    other: () => null,
  });
}

/** Whether opens below this held directory refuse to cross a mount (a cross_mounts = false workdir). */
export function refusesMountCrossing(dirFd: number): boolean {
  return select<boolean>({ linux: () => isConfined(dirFd), other: () => false });
}

/** The calls every scanned file makes: open, facts, read, close. */
export function scanSyscalls(): unknown[] {
  return select<unknown[]>({
    linux: () => [openat2, hasOpenat2, statFacts, close, openReadBeneath, linuxNative.openReadChild, scanIo.facts, scanIo.readAt, ...wrapperHelpers()],
    other: () => [scanIo.facts, scanIo.readAt],
  });
}

/** The calls every directory entry of a walk makes. */
export function walkSyscalls(): unknown[] {
  return select<unknown[]>({
    linux: () => [getdents64, isConfined, DirentReader.prototype.next, SmallestEntries.prototype.offer],
    other: () => [SmallestEntries.prototype.offer],
  });
}
