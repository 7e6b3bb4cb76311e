// Publish a private file atomically: a temp file created exclusively (O_EXCL|O_NOFOLLOW, mode
// 0600) in the target's directory, written, fsynced, renamed over the target, then the
// directory fsynced. Readers see the old bytes or the new, never a mix; on any failure the temp
// file is removed and the target is untouched. A symlink (or anything but a regular file) at
// the target is refused rather than followed or replaced.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { errnoCode, ServerfsError } from "../errors.ts";

export function writePrivateFileAtomic(target: string, content: string, label: string = target): void {
  const refuse = (why: string) => new ServerfsError("IO_ERROR", `${label}: ${why}`);
  try {
    const st = fs.lstatSync(target);
    if (st.isSymbolicLink()) throw refuse("refusing to write through a symbolic link");
    if (!st.isFile()) throw refuse("exists and is not a regular file");
  } catch (err) {
    if (err instanceof ServerfsError) throw err;
    if (errnoCode(err) !== "ENOENT") throw refuse("cannot inspect the output path");
  }
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.serverfs-tmp-${randomBytes(6).toString("hex")}`);
  const flags = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0);
  let fd: number;
  try {
    fd = fs.openSync(temp, flags, 0o600);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") throw refuse("the output directory does not exist");
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw refuse("the output directory is not writable");
    throw refuse("cannot create the output file");
  }
  try {
    try {
      const bytes = Buffer.from(content, "utf8");
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      if (process.platform !== "win32") fs.fchmodSync(fd, 0o600);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, target);
  } catch (err) {
    try {
      fs.unlinkSync(temp);
    } catch {
      // Already gone (rename happened or never created): nothing to clean.
    }
    if (err instanceof ServerfsError) throw err;
    throw refuse("writing the output file failed");
  }
  if (process.platform !== "win32") {
    try {
      const dfd = fs.openSync(dir, fs.constants.O_RDONLY);
      try {
        fs.fsyncSync(dfd);
      } finally {
        fs.closeSync(dfd);
      }
    } catch {
      // Directory fsync is best effort (some filesystems refuse it); the rename is done.
    }
  }
}
