// An operator-visible private file (rendered config, service unit, plist, task XML) published
// atomically (./atomic-file.ts), with each refusal turned into an IO_ERROR that names the file by
// the label the caller gives, never by a path the caller did not choose.
import { platformError } from "../errors.ts";
import { AtomicPublishError, type AtomicPublishFailure, publishFileAtomic } from "./atomic-file.ts";

const WHY: Record<AtomicPublishFailure, string> = {
  target_symlink: "refusing to write through a symbolic link",
  target_not_regular: "exists and is not a regular file",
  target_exists: "already exists",
  target_uninspectable: "cannot inspect the output path",
  directory_missing: "the output directory does not exist",
  directory_not_writable: "the output directory is not writable",
  temp_create_failed: "cannot create the output file",
  write_failed: "writing the output file failed",
};

export function writePrivateFileAtomic(target: string, content: string, label: string = target): void {
  try {
    publishFileAtomic(target, content, { mode: 0o600 });
  } catch (err) {
    const reason = err instanceof AtomicPublishError ? err.reason : "write_failed";
    throw platformError("IO_ERROR", `${label}: ${WHY[reason]}`);
  }
}
