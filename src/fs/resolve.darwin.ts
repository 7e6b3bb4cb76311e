// macOS backend (written against documented behaviour; it cannot run on this Linux CI, and the
// service refuses it until it has been proved on a Mac — see `darwinNative.proved`).
// Not implemented yet: every call raises NATIVE_PLATFORM_UNSUPPORTED rather than risking an
// unverified containment path.

import { ServerfsError } from "../errors.ts";
import type { FsNative } from "./native.ts";

function unsupported(): never {
  throw new ServerfsError("NATIVE_PLATFORM_UNSUPPORTED", "the macOS file backend is not available in this build");
}

export const darwinNative: FsNative = {
  openRoot: unsupported,
  openBeneath: unsupported,
  reopenForRead: unsupported,
  readDir: unsupported,
  readDirFast: unsupported,
  lstatChild: unsupported,
  linkAt: unsupported,
  renameAt: unsupported,
  unlinkAt: unsupported,
  mkdirAt: unsupported,
  fchmod: unsupported,
  fchown: unsupported,
  listXattrs: unsupported,
  setXattr: unsupported,
  fsync: unsupported,
};
