// Kernel-measured identity of the other end of a connected AF_UNIX socket: getsockopt(SO_PEERCRED)
// fills struct ucred {pid_t pid; uid_t uid; gid_t gid}. Unavailable credentials come back as nulls,
// which callers must treat as "reject".
import { ptr } from "bun:ffi";
import type { PeerIdentity } from "../types.ts";
import { linuxLibc } from "./libc.ts";

const SOL_SOCKET = 1;
const SO_PEERCRED = 17;

export function linuxPeerCredentials(fd: number): PeerIdentity {
  const none: PeerIdentity = { uid: null, gid: null, pid: null };
  if (!Number.isInteger(fd) || fd < 0) return none;
  const ucred = new Uint8Array(12);
  const length = new Uint32Array([12]);
  if (linuxLibc().getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ptr(ucred), ptr(length)) !== 0) return none;
  if (length[0] !== 12) return none;
  const view = new DataView(ucred.buffer);
  const pid = view.getInt32(0, true);
  return { pid: pid > 0 ? pid : null, uid: view.getUint32(4, true), gid: view.getUint32(8, true) };
}
