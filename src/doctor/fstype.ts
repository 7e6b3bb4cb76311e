// Which filesystems a workdir root may live on without a warning. The probe itself (mount point,
// type, read-only) is the platform layer's (platform/fs/mounts.ts).
export { mountOf, type MountFacts } from "../../platform/fs/mounts.ts";

/** Filesystems where serverfs's locking and revision guarantees have not been measured. */
const REMOTE_OR_UNMEASURED = /^(nfs4?|cifs|smb3?|smbfs|afpfs|webdav|9p|ceph|glusterfs|lustre|gpfs|virtiofs|vboxsf|fuse(\..*)?|fuseblk|macfuse|osxfuse(fs)?|msdos|vfat|exfat)$/;

export function fsTypeConcern(fsType: string): string | null {
  if (REMOTE_OR_UNMEASURED.test(fsType)) {
    return `${fsType} is a network, FUSE or FAT-family filesystem: file locks, permissions and revision tokens are not guaranteed there`;
  }
  return null;
}
