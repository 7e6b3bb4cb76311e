// The filesystem a workdir root lives on, per OS. Linux reads mountinfo; macOS asks statfs(2);
// Windows is not measured (the file tools do not run there yet), and says so.
import type { MountFacts } from "./mounts.linux.ts";

export type { MountFacts };

export async function mountOf(realPath: string): Promise<MountFacts | null | "not-measured"> {
  if (process.platform === "linux") return (await import("./mounts.linux.ts")).linuxMountOf(realPath);
  if (process.platform === "darwin") return (await import("./fstype.darwin.ts")).darwinMountOf(realPath);
  return "not-measured";
}

/** Filesystems where serverfs's locking and revision guarantees have not been measured. */
const REMOTE_OR_UNMEASURED = /^(nfs4?|cifs|smb3?|smbfs|afpfs|webdav|9p|ceph|glusterfs|lustre|gpfs|virtiofs|vboxsf|fuse(\..*)?|fuseblk|msdos|vfat|exfat)$/;

export function fsTypeConcern(fsType: string): string | null {
  if (REMOTE_OR_UNMEASURED.test(fsType)) {
    return `${fsType} is a network, FUSE or FAT-family filesystem: file locks, permissions and revision tokens are not guaranteed there`;
  }
  return null;
}
