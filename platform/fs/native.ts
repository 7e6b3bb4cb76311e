// The descriptor seam between file operations and the OS. Every request path is opened relative
// to an already-held directory descriptor without following any symlink in any component;
// after that, content and metadata go through the descriptor, and mutations name only a final
// component relative to a verified parent descriptor. One implementation per OS family.

import { platformError } from "../errors.ts";
import { PLATFORM_NAME, select } from "../os.ts";
import { darwinNative } from "./resolve-darwin.ts";
import { linuxNative } from "./resolve-linux.ts";
import { windowsNative } from "./resolve-windows.ts";

export type { DirEntryInfo, DirectoryLock, DirSelection, DirSmallest, FsNative, OpenKind, RootOptions } from "./native-types.ts";
import type { FsNative } from "./native-types.ts";

/** The backend for this OS. Module imports are side-effect free; libraries load on first call. */
export function fsNative(): FsNative {
  return select<FsNative>({
    linux: () => linuxNative,
    darwin: () => darwinNative,
    windows: () => windowsNative,
    other: () => {
      throw platformError("NATIVE_PLATFORM_UNSUPPORTED", `file tools are not available on ${PLATFORM_NAME}`);
    },
  });
}
