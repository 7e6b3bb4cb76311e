// Removing a scratch tree on Windows without ever following a link. libuv's lstat reports a
// junction whose target is not a drive path (`\??\Volume{GUID}\...`) as a plain directory, so a
// walk by path (rmSync, readdir + lstat) would enter it and delete the target's files. Here every
// entry is opened relative to its parent's handle with FILE_OPEN_REPARSE_POINT, typed from its own
// handle (FileAttributeTagInformation), and a reparse point of any kind (symlink, junction, mount
// point, cloud placeholder) is deleted as itself through that same handle: its target is never
// opened. Under Wine, which follows a Unix symlink even under FILE_OPEN_REPARSE_POINT and reports
// no reparse attribute, a followed link shows as a handle whose path is not the parent's path plus
// the entry's name; deleting that handle would delete the target, so such an entry is left in
// place and the removal fails (LinkNotRemovedError) once everything else is gone.
import path from "node:path";
import * as nt from "./windows.ts";

const { A, OPT, DISP } = nt;
const ATTR_READONLY = 0x1;
const ENTRY_ACCESS = A.DELETE | A.READ_ATTRIBUTES | A.WRITE_ATTRIBUTES | A.READ_DATA | A.TRAVERSE;

/** A link in the tree that could not be removed without touching its target (Wine only). */
export class LinkNotRemovedError extends nt.NtError {
  constructor() {
    super("ELOOP", 0x8000002d, "removeTree");
  }
}

function isAbsent(err: unknown): boolean {
  return err instanceof nt.NtError && err.code === "ENOENT";
}

/** Every name in the directory behind `h` (read fully before anything is deleted). */
function namesIn(h: bigint): string[] {
  const buf = new Uint8Array(64 * 1024);
  const names: string[] = [];
  for (let batch = nt.queryDirectory(h, buf, true); batch !== null; batch = nt.queryDirectory(h, buf, false)) {
    for (const e of batch) if (e.name !== "." && e.name !== "..") names.push(e.name);
  }
  return names;
}

/** Delete what `h` is (the link itself for a reparse point); a read-only file loses that bit first. */
function deleteObject(h: bigint, attributes: number): void {
  try {
    nt.deleteHandle(h, true);
  } catch (err) {
    // the classic disposition (older Windows, Wine) refuses a read-only file: CANNOT_DELETE
    if (!(err instanceof nt.NtError && err.code === "EPERM" && (attributes & ATTR_READONLY) !== 0)) throw err;
    nt.setFileAttributes(h, attributes & ~ATTR_READONLY);
    nt.deleteHandle(h, true);
  }
}

interface Walk {
  /** Wine: a handle's path must be its parent's path plus its name, or a Unix symlink was followed. */
  checkPaths: boolean;
  linksLeft: number;
}

/** Empty the directory behind `dir` (whose path is `dirPath` when paths are checked). */
function emptyDirectory(dir: bigint, dirPath: string, walk: Walk): void {
  for (const name of namesIn(dir)) {
    let h: bigint;
    try {
      h = nt.ntOpen(dir, name, ENTRY_ACCESS, DISP.OPEN, OPT.OPEN_REPARSE_POINT);
    } catch (err) {
      if (isAbsent(err)) continue; // gone meanwhile
      throw err;
    }
    try {
      const expected = walk.checkPaths ? `${dirPath}\\${name}` : "";
      if (walk.checkPaths && nt.handlePath(h).toUpperCase() !== expected.toUpperCase()) {
        walk.linksLeft++;
        continue;
      }
      const { attributes } = nt.attributeTag(h);
      if ((attributes & nt.ATTR_REPARSE_POINT) === 0 && (attributes & nt.ATTR_DIRECTORY) !== 0) {
        const before = walk.linksLeft;
        emptyDirectory(h, expected, walk);
        if (walk.linksLeft > before) continue; // still holds a link that had to stay
      }
      deleteObject(h, attributes);
    } finally {
      nt.ntClose(h);
    }
  }
}

/** Removes `dir` and everything under it, never following a link; absent is fine. */
export function removeTreeWindows(dir: string): void {
  let root: bigint;
  try {
    root = nt.openPathNoFollow(dir, ENTRY_ACCESS);
  } catch (err) {
    if (isAbsent(err)) return;
    throw err;
  }
  const walk: Walk = { checkPaths: nt.underWine(), linksLeft: 0 };
  try {
    // Wine: a top that is a Unix symlink opens as its target, whose name is the target's
    if (walk.checkPaths && nt.storedName(root).toUpperCase() !== path.win32.basename(dir).toUpperCase()) throw new LinkNotRemovedError();
    const { attributes } = nt.attributeTag(root);
    // a top that is itself a link is removed as the link
    if ((attributes & nt.ATTR_REPARSE_POINT) === 0 && (attributes & nt.ATTR_DIRECTORY) !== 0) {
      emptyDirectory(root, walk.checkPaths ? nt.handlePath(root) : "", walk);
      if (walk.linksLeft > 0) throw new LinkNotRemovedError();
    }
    deleteObject(root, attributes);
  } finally {
    nt.ntClose(root);
  }
}
