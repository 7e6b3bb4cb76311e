// The descriptor seam between file operations and the OS. The interface and the per-OS backends
// (openat2 on Linux, O_NOFOLLOW_ANY on macOS) live in the platform layer, platform/fs/native.ts;
// the file tools import them from here.
export { fsNative, type DirEntryInfo, type DirSelection, type DirSmallest, type FsNative, type OpenKind, type RootOptions } from "../../platform/fs/native.ts";
